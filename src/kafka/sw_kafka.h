/*
 * Kafka plumbing shared by run, produce, tail, mock and demo: librdkafka
 * configurations built from stormwatch properties (our defaults, then the
 * kafka.* pass-through with librdkafka's own error text), the bridge from
 * librdkafka logs and errors to sw_log, and the embedded mock cluster.
 * Decides nothing about alerts.
 */
#ifndef SW_KAFKA_H
#define SW_KAFKA_H

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_conf.h"
#include "sw_err.h"
#include "sw_log.h"
#include "sw_metrics.h"

/**
 * An offset reset after "Offset out of range": the consumer wanted @p from
 * of topic [partition], the broker no longer (or never) had it, and
 * auto.offset.reset moved the consumer to the beginning or the end.
 */
typedef struct sw_kafka_reset_s {
    char topic[256];
    int32_t partition;
    int64_t from; /**< the offset the consumer asked for */
    int64_t to;   /**< where it went, when librdkafka said so; -1: look it up */
    bool end;     /**< to the end (latest), not the beginning (earliest) */
} sw_kafka_reset_t;

/** Resets noted by the log callback, awaiting the daemon's main loop. */
#define SW_KAFKA_RESETS 32

/** Which client a configuration is for. */
typedef enum sw_kafka_role_e {
    SW_KAFKA_CONSUMER = 0,
    SW_KAFKA_PRODUCER = 1,
    SW_KAFKA_ADMIN = 2 /**< a plain client: metadata, mock host */
} sw_kafka_role_t;

/**
 * The opaque of every client we create: rd_kafka_opaque(rk) points to one.
 * The log and error callbacks use it; commands keep their state in user.
 */
typedef struct sw_kafka_ctx_s {
    const sw_log_t *log;    /**< borrowed */
    void *user;             /**< the command's own state */
    volatile bool fatal;    /**< a fatal librdkafka error was reported */
    char fatal_reason[256]; /**< its text */
    volatile int last_err;  /**< the latest non-fatal client error (0: none) */
    char last_reason[256];  /**< its text */
    /* Set once a broker answered (sw_kafka_reachable, the daemons' wait):
     * before, "all brokers are down" is first contact's business (one
     * summary line of the caller's), after it a warning of its own. */
    volatile bool contacted;
    sw_log_limit_t lim_down; /**< "all brokers down" warnings (error callback) */
    sw_log_limit_t lim_err;  /**< other client errors (error callback) */
    /* Offset resets seen by the log callback (a librdkafka thread), taken
     * by sw_kafka_account_resets() on the daemon's thread; a spin lock
     * (zero = free, so a zeroed context is ready). */
    atomic_int resets_lock;
    size_t n_resets;
    uint64_t resets_dropped; /**< resets beyond SW_KAFKA_RESETS before a take */
    sw_kafka_reset_t resets[SW_KAFKA_RESETS];
} sw_kafka_ctx_t;

/**
 * @brief Whether librdkafka's log line @p text of facility @p fac says that
 *        an out-of-range offset was reset by auto.offset.reset, e.g.
 *        "t [0]: offset reset (at offset 5, broker 1) to cached BEGINNING
 *        offset 3001: fetch failed due to requested offset not available on
 *        the broker: Broker: Offset out of range" (librdkafka 2.x, OFFSET, level 4); @p out
 *        gets where from and where to (to = -1 when the line does not say).
 */
bool sw_kafka_parse_reset(const char *fac, const char *text, sw_kafka_reset_t *out);

/**
 * @brief How many messages a reset skipped: @p to - @p from when the
 *        consumer moved forward, else 0 (an offset beyond the log's end
 *        read again from the beginning skips nothing).
 */
uint64_t sw_kafka_reset_skipped(const sw_kafka_reset_t *rs);

/**
 * @brief The daemons' main loop, now and then: every offset reset the log
 *        callback noted since the last call is accounted: where the
 *        consumer went (from librdkafka's line, else the partition's
 *        watermark, asked of the broker), the messages it skipped added to
 *        stormwatch_input_skipped_messages_total{topic,partition} of @p m
 *        (NULL: none), and one WARN line that says data was lost, with the
 *        offsets (or, when nothing was skipped, that the offset was beyond
 *        the log). @returns the messages skipped.
 */
uint64_t sw_kafka_account_resets(rd_kafka_t *consumer, sw_kafka_ctx_t *ctx, sw_metrics_t *m);

/**
 * @brief What a client error means for an operator: "broker unreachable",
 *        "authentication failed", "TLS failed", "not authorized" or NULL
 *        when the code is none of those.
 */
const char *sw_kafka_err_kind(int err);

/**
 * @brief An offset as an operator reads it: the number, or "beginning",
 *        "end", "stored" or "none" for librdkafka's logical offsets (-2,
 *        -1, -1000, -1001; "offset -1001" means nothing to a reader).
 * @returns @p buf.
 */
const char *sw_kafka_offset_str(int64_t offset, char *buf, size_t size);

/**
 * @brief Build a librdkafka configuration for @p role: stormwatch's
 *        defaults (consumer: manual commits, cooperative-sticky,
 *        earliest; producer: idempotent), bootstrap.servers, group.id
 *        (consumer), then every kafka.* pass-through property of the scope,
 *        in the order they were set. Logs and errors go to @p ctx.
 * @param conf its pass-through properties; NULL: none.
 * @param group_id the consumer's group.id (e.g. sw_settings_t kafka.group_id);
 *        NULL: not set (a consumer without a group, as tail's).
 * @returns caller frees with rd_kafka_conf_destroy() unless handed to
 *          rd_kafka_new(); NULL with errstr naming the property and quoting
 *          librdkafka's text.
 */
rd_kafka_conf_t *sw_kafka_conf(const sw_conf_t *conf, sw_kafka_role_t role, const char *bootstrap,
                               const char *group_id, sw_kafka_ctx_t *ctx, char *errstr,
                               size_t errstr_size);

/**
 * @brief A producer for one topic, as the node-side commands make it
 *        (`produce`, `ship`): sw_kafka_conf() for SW_KAFKA_PRODUCER, the
 *        delivery report callback, the client and its topic handle.
 * @param rk set as soon as the client exists (also when the topic handle
 *        then fails: the caller destroys it with its other state).
 * @returns SW_OK, or SW_ERR_INVALID_ARG with @p errstr set (a
 *          configuration error, or "topic \"T\": REASON").
 */
sw_err_t sw_kafka_producer_new(const sw_conf_t *conf, const char *bootstrap, sw_kafka_ctx_t *ctx,
                               void (*dr_msg_cb)(rd_kafka_t *, const rd_kafka_message_t *, void *),
                               const char *topic, rd_kafka_t **rk, rd_kafka_topic_t **rkt,
                               char *errstr, size_t errstr_size);

/**
 * @brief A `-X NAME=VALUE` of a one-client tool (produce: producer, tail:
 *        consumer): only bootstrap.servers and the kafka.* pass-through
 *        its @p role uses are taken; errors go to stderr prefixed
 *        "stormwatch @p cmd: option -X:".
 */
bool sw_kafka_tool_prop(sw_conf_t *conf, const char *pair, sw_kafka_role_t role, const char *cmd);

/**
 * @brief A tool's bootstrap servers: @p opt (-b), else bootstrap.servers
 *        (@p set, filled from @p conf), else "" when a
 *        kafka.[role.]bootstrap.servers pass-through of @p conf sets them;
 *        NULL when nothing does, after printing `stormwatch @p cmd: no Kafka
 *        bootstrap servers: ...` on stderr.
 */
const char *sw_kafka_tool_bootstrap(const sw_conf_t *conf, const sw_settings_t *set,
                                    const char *opt, sw_kafka_role_t role, const char *cmd);

/** @brief rd_kafka_conf_set() with the error text "property "NAME": TEXT". */
sw_err_t sw_kafka_set(rd_kafka_conf_t *kc, const char *name, const char *value, char *errstr,
                      size_t errstr_size);

/**
 * @brief Whether any broker of @p rk answers a metadata request within its
 *        socket.timeout.ms (the tools' first step: an unreachable cluster
 *        is said at once, not as a missing topic or after
 *        message.timeout.ms).
 * @param bootstrap the bootstrap.servers the client was given (named in
 *        the message; borrowed).
 * @returns SW_OK, or SW_ERR_KAFKA with @p errstr "cannot reach the Kafka
 *          cluster at BOOTSTRAP within socket.timeout.ms=N: REASON".
 */
sw_err_t sw_kafka_reachable(rd_kafka_t *rk, const char *bootstrap, char *errstr,
                            size_t errstr_size);

/**
 * @brief First contact, before (or without) any client: every address of
 *        bootstrap.servers in @p kc is resolved (getaddrinfo) and its
 *        addresses connected to over TCP, all at once (non-blocking), until
 *        one accepts, every one has answered, or
 *        socket.connection.setup.timeout.ms (at most socket.timeout.ms)
 *        passed. Only TCP: a SASL or TLS listener that accepts the
 *        connection passes, and what follows is librdkafka's to judge.
 * @returns SW_OK when an address accepted a connection, or when the probe
 *          cannot judge (no bootstrap.servers, test.mock.num.brokers);
 *          SW_ERR_KAFKA with @p errstr "cannot reach the Kafka cluster:
 *          127.0.0.1:1 refused the connection; nosuchhost.invalid:9092
 *          does not resolve (Name or service not known); check
 *          bootstrap.servers" (every address and its answer).
 */
sw_err_t sw_kafka_probe(const rd_kafka_conf_t *kc, char *errstr, size_t errstr_size);

/**
 * @brief The daemons' first contact: sw_kafka_probe() of @p kc until an
 *        address accepts or *@p running is cleared. The first refusal is
 *        one ERROR line on @p log ("... ; retrying every 2 s"), a changed
 *        answer another, the same answer again a WARN every 30 s.
 * @returns true once an address accepted, false when stopped.
 */
bool sw_kafka_wait_reachable(const rd_kafka_conf_t *kc, const sw_log_t *log,
                             volatile sig_atomic_t *running);

/**
 * @brief Whether the cluster of @p rk names a controller among its
 *        brokers (the Admin API's CreateTopics goes to it). librdkafka's
 *        mock cluster (2.0) names broker 0, which it does not have, and
 *        does not implement CreateTopics: asking it would only wait out
 *        the request timeout.
 */
bool sw_kafka_has_controller(rd_kafka_t *rk);

/** An embedded mock cluster (librdkafka's in-process Kafka brokers). */
typedef struct sw_mock_s sw_mock_t;

/**
 * @brief Start a mock cluster of @p brokers brokers on loopback (random
 *        ports). @returns caller frees with sw_mock_destroy(); NULL on error.
 */
sw_mock_t *sw_mock_new(int brokers, sw_kafka_ctx_t *ctx, char *errstr, size_t errstr_size);

/** @brief The bootstrap.servers string (borrowed: valid while @p m lives). */
const char *sw_mock_bootstrap(const sw_mock_t *m);

/** @brief The librdkafka mock handle, for fault injection (borrowed). */
rd_kafka_mock_cluster_t *sw_mock_cluster(sw_mock_t *m);

/** @brief Number of brokers. */
int sw_mock_brokers(const sw_mock_t *m);

/** @brief Create a topic with @p partitions partitions. */
sw_err_t sw_mock_topic(sw_mock_t *m, const char *topic, int partitions, char *errstr,
                       size_t errstr_size);

/** @brief Stop the cluster (accepts NULL). */
void sw_mock_destroy(sw_mock_t *m);

/** @brief Write @p text and a newline to @p path atomically (tmp + rename). */
sw_err_t sw_write_file_atomic(const char *path, const char *text, char *errstr, size_t errstr_size);

#endif /* SW_KAFKA_H */
