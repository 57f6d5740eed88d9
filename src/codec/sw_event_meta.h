/*
 * SPEC 8.1's death markers in an event's metadata, read by the decoders
 * (sw_tdec_json(), sw_avro_decode_event()) so that the engine gets them
 * already parsed: whether metadata has a top-level "oom_reason" or
 * "oom_dump_path" key, and oom_reason's text unescaped. No I/O.
 */
#ifndef SW_EVENT_META_H
#define SW_EVENT_META_H

#include "sw_analysis.h"
#include "sw_event.h"

/** Room for an unescaped oom_reason: SW_X8_REASON_MAX bytes, "…" and slack. */
#define SW_EVENT_REASON_BUF (SW_X8_REASON_MAX + 8)

/**
 * @brief Set ev->oom_marker, ev->has_oom_reason and ev->oom_reason from
 *        ev->metadata_json (samples: cleared, their metadata is not read).
 * @param buf room for SW_EVENT_REASON_BUF bytes, owned by the decoder:
 *            ev->oom_reason points into it until the decoder's next event.
 * @remark oom_reason is cut to SW_X8_REASON_MAX bytes on a UTF-8 boundary,
 *         then "…" appended; \u escapes are decoded (a lone surrogate as
 *         U+FFFD).
 */
void sw_event_meta_oom(sw_event_t *ev, char *buf);

#endif /* SW_EVENT_META_H */
