/*
 * Alert records (SPEC 6, JSON as sw_alert_json_record() writes them) back
 * into sw_record_t, so that a consumer of the alert topic (notify) can hand
 * them to the pager encoders unchanged. Avro records are first turned into
 * that JSON by sw_avro_decode_record_json(). Pure: text in, record out, all
 * memory in a caller arena; no I/O.
 */
#ifndef SW_CODEC_RECORD_H
#define SW_CODEC_RECORD_H

#include <stddef.h>

#include "sw_analysis.h"
#include "sw_arena.h"
#include "sw_err.h"
#include "sw_jdom.h"

/** The keys that name an alert record and its place in a lifecycle. */
typedef struct sw_record_head_s {
    sw_action_t action; /**< action */
    bool has_job_id;    /**< job_id is a string (false: null) */
    sw_str_t job_id;    /**< borrowed from the parsed document */
    int64_t episode;    /**< >= 0; 0 for crash and warning (their number is their own key) */
    int64_t revision;   /**< >= 0; 0 for crash and warning (read with their payload) */
} sw_record_head_t;

/**
 * @brief The action of a parsed alert record: trigger, update, resolve,
 *        summary, crash or warning.
 * @returns false when @p root has no such "action" (then *act untouched).
 */
bool sw_record_action(const sw_jnode_t *root, sw_action_t *act);

/**
 * @brief Read the head of a parsed alert record (a JSON object): action,
 *        job_id (string or null, required), and for trigger, update,
 *        resolve and summary the integers episode and revision (>= 0,
 *        required). The one reader of these keys: sw_record_parse_json(),
 *        the report and demo use it and word its refusal each their way.
 * @param bad_key on SW_ERR_INVALID_ARG the key refused ("action", "job_id",
 *        "episode" or "revision"), with @p bad_val its value (NULL when
 *        absent; borrowed from @p root).
 * @returns SW_OK, or SW_ERR_INVALID_ARG; @p head is then partly filled.
 */
sw_err_t sw_record_head(const sw_jnode_t *root, sw_record_head_t *head, const char **bad_key,
                        const sw_jnode_t **bad_val);

/**
 * @brief Parse one alert record (a JSON object) into @p rec.
 * @param arena every string and array of @p rec is allocated here
 *        (borrowed: @p rec is valid until the arena is reset or cleared).
 * @remark Required keys: action (trigger|update|resolve|summary), job_id
 *         (string or null), episode and revision (integers >= 0); the other
 *         SPEC and extra keys are read when present and type-checked.
 *         episode_confidence comes from the record's severity (critical 2,
 *         error 1, warning 0, info -2): right for a trigger, the caller
 *         fixes it for the rest of an episode. The anchor rank is the rank
 *         of the maps that is not a suspect's (-1 when none), so that
 *         sw_alert_json_record() writes the same maps back.
 * @returns SW_OK; SW_ERR_PARSE (not JSON) or SW_ERR_INVALID_ARG (a key
 *          missing or of the wrong type), with @p errstr naming the key and
 *          what was expected.
 */
sw_err_t sw_record_parse_json(const char *text, size_t len, sw_arena_t *arena, sw_record_t *rec,
                              char *errstr, size_t errstr_size);

#endif /* SW_CODEC_RECORD_H */
