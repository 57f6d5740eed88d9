/*
 * The daemon's start (see sw_run.c, sw_run_int.h): the clients, the wait
 * for the cluster, the topics it writes (checked, created when allowed),
 * the repartition topic, the alert schema in the registry, the
 * subscription.
 */
#include "sw_run_int.h"
#include "sw_run_setup.h"
#include "sw_run_keying.h"
#include "sw_run_mem.h"
#include "sw_run_members.h"
#include "sw_run_out.h"
#include "sw_run_work.h"

#include <time.h>

#include "sw_schemas.h"

/* Output with a registry: the id of first_cause_alert.avsc under
 * <output.topic>-value (registered or looked up), asked until the
 * registry answers or the daemon is stopped. @returns 0, 1 (refused) or
 * -1 (stopped). */
int sw_run_registry_alert_id(run_t *r)
{
    bool do_register = r->set->registry.auto_register;
    char subject[300], err[600];
    snprintf(subject, sizeof(subject), "%s-value", r->out_topic);
    while (*r->opts->running) {
        int32_t id = 0;
        sw_err_t rc = sw_registry_subject_id(r->reg, subject, sw_schema_first_cause_alert,
                                             do_register, &id, err, sizeof(err));
        sw_run_registry_metrics(r);
        if (rc == SW_OK) {
            r->schema_alert = id;
            sw_log(r->log, SW_LOG_INFO, "alert schema: id %ld under subject %s (%s)", (long)id,
                   subject, do_register ? "registered" : "looked up");
            return 0;
        }
        if (rc != SW_ERR_IO) {
            sw_log(r->log, SW_LOG_ERROR, "cannot get the alert schema's id under subject %s: %s%s",
                   subject, err,
                   rc == SW_ERR_NOT_FOUND && !do_register
                       ? " (auto.register.schemas=false: register schemas/first_cause_alert.avsc "
                         "under that subject first)"
                       : "");
            return 1;
        }
        sw_log_limited(r->log, &r->lim_reg, SW_LOG_WARN,
                       "alert schema under subject %s: %s; retrying", subject, err);
        int64_t wait = sw_registry_backoff_ms(r->reg);
        while (wait > 0 && *r->opts->running) {
            int64_t step = wait > 100 ? 100 : wait;
            struct timespec ts = {0, (long)step * 1000000L};
            nanosleep(&ts, NULL);
            wait -= step;
        }
    }
    return -1;
}

/* Wait until the cluster answers a metadata request, saying why not
 * (broker unreachable, authentication, TLS, authorization) every few
 * seconds, until it answers or a stop is requested. @returns false on a
 * stop or a fatal error. */
static bool wait_cluster(run_t *r)
{
    int64_t t0 = sw_clock_ms();
    int attempts = 0;
    for (;;) {
        const rd_kafka_metadata_t *md = NULL;
        rd_kafka_resp_err_t e = rd_kafka_metadata(r->producer, 0, NULL, &md, 2000);
        if (!e) {
            rd_kafka_metadata_destroy(md);
            r->kctx.contacted = true;
            if (attempts)
                sw_log(r->log, SW_LOG_INFO, "the Kafka cluster answers (after %lld ms)",
                       (long long)(sw_clock_ms() - t0));
            return true;
        }
        attempts++;
        rd_kafka_poll(r->producer, 0); /* serves the error callback: the reason */
        if (r->kctx.fatal || !*r->opts->running) return false;
        int last = r->kctx.last_err ? r->kctx.last_err : e;
        const char *kind = sw_kafka_err_kind(last);
        sw_log(r->log, SW_LOG_WARN,
               "cannot reach the Kafka cluster at %s: %s (%s%s%s); retrying (%lld s so far)",
               r->opts->bootstrap, kind ? kind : rd_kafka_err2name((rd_kafka_resp_err_t)last),
               rd_kafka_err2name((rd_kafka_resp_err_t)last), r->kctx.last_err ? ": " : "",
               r->kctx.last_err ? r->kctx.last_reason : "", (long long)(sw_clock_ms() - t0) / 1000);
        for (int i = 0; i < 30 && *r->opts->running; i++) usleep(100000);
        if (!*r->opts->running) return false;
    }
}

/* Partitions of @p topic: 0 when it does not exist; -1 (with *why) when
 * the cluster could not say or refused to. Asks for every topic's
 * metadata: a request naming the topic would make a broker with
 * auto.create.topics.enable create it with the broker's defaults. */
static int topic_check(run_t *r, const char *topic, const char **why)
{
    const rd_kafka_metadata_t *md = NULL;
    int n = -1;
    rd_kafka_resp_err_t e = rd_kafka_metadata(r->producer, 1, NULL, &md, 10000);
    if (!e) {
        n = 0;
        for (int i = 0; i < md->topic_cnt; i++) {
            if (strcmp(md->topics[i].topic, topic) != 0) continue;
            e = md->topics[i].err;
            if (!e) n = md->topics[i].partition_cnt;
            else if (e != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) n = -1;
            break;
        }
    }
    if (md) rd_kafka_metadata_destroy(md);
    if (n < 0 && why) {
        const char *kind = sw_kafka_err_kind(e);
        *why = kind ? kind : rd_kafka_err2str(e);
    }
    return n;
}

int sw_run_topic_partitions(run_t *r, const char *topic)
{
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(r->producer, topic, NULL);
    int n = 0;
    if (rd_kafka_metadata(r->producer, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (md->topic_cnt == 1 && !md->topics[0].err) n = md->topics[0].partition_cnt;
        rd_kafka_metadata_destroy(md);
    }
    rd_kafka_topic_destroy(rkt);
    return n;
}

static int subscribe(run_t *r)
{
    const sw_conf_strs_t *in = &r->set->kafka.input_topics;
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new((int)in->n + 1);
    for (size_t i = 0; i < in->n; i++)
        rd_kafka_topic_partition_list_add(topics, in->v[i], RD_KAFKA_PARTITION_UA);
    if (r->rep_topic && !r->rep_auto) /* auto: the mirror reads it with the input */
        rd_kafka_topic_partition_list_add(topics, r->rep_topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(r->consumer, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    if (err) {
        sw_log(r->log, SW_LOG_ERROR, "cannot subscribe: %s", rd_kafka_err2str(err));
        return 1;
    }
    return 0;
}

/* The kafka-topics.sh line that creates @p topic as the docs want it. */
static void create_cmd(const run_t *r, const char *topic, int parts, const char *retention_ms,
                       char *buf, size_t size)
{
    snprintf(buf, size,
             "kafka-topics.sh --bootstrap-server %s --create --topic %s --partitions %d "
             "--config cleanup.policy=delete%s%s",
             r->opts->bootstrap, topic, parts, retention_ms ? " --config retention.ms=" : "",
             retention_ms ? retention_ms : "");
}

/* A state topic of more than one partition: snapshots use partition 0
 * only, so it works, but it is not what the docs require; said once,
 * with the fix. */
static void check_state_parts(run_t *r)
{
    if (!r->restore) return;
    int p = topic_check(r, r->state_topic, NULL);
    if (p <= 1) return;
    char cmd[900];
    create_cmd(r, r->state_topic, 1, "604800000", cmd, sizeof(cmd));
    sw_log(r->log, SW_LOG_WARN,
           "topic \"%s\" (state.topic) has %d partitions; state snapshots use partition 0 only "
           "and the topic should have 1: recreate it while no stormwatch run of the group runs "
           "(the snapshots are rebuilt from the input): kafka-topics.sh --bootstrap-server %s "
           "--delete --topic %s; %s",
           r->state_topic, p, r->opts->bootstrap, r->state_topic, cmd);
}

/* The topics the daemon writes (output, dead letters, state): created
 * when missing and topics.create=on (Admin API, cleanup.policy=delete,
 * the broker's replication factor), else an error that names them and
 * says how to create them. @returns 0, or 1 (logged). */
static int ensure_topics(run_t *r)
{
    bool create = r->set->delivery.topics_create;
    /* Partitions for output and dead letters: the (first) input topic's. */
    const char *in0 = r->set->kafka.input_topics.v[0];
    r->in_parts = in0 && in0[0] != '^' ? topic_check(r, in0, NULL) : 0;
    if (r->in_parts < 0) r->in_parts = 0;
    int in_parts = r->in_parts < 1 ? 1 : r->in_parts;
    struct {
        const char *name;
        int parts;
        const char *retention_ms; /* NULL: the broker's default */
    } want[4] = {{r->out_topic, in_parts, NULL},
                 {r->dlq_topic, in_parts, NULL},
                 {r->rep_topic, in_parts, "604800000"},
                 {r->state_topic, 1, "604800000"}};
    int nwant = 4;
    if (!r->restore) nwant--;                      /* no state topic */
    if (!r->rep_topic) want[2] = want[3], nwant--; /* no repartition topic */
    rd_kafka_NewTopic_t *nt[4];
    const char *names[4];
    int n = 0;
    for (int i = 0; i < nwant; i++) {
        const char *why = NULL;
        int p = topic_check(r, want[i].name, &why);
        if (p < 0) {
            sw_log(r->log, SW_LOG_ERROR, "cannot check topic \"%s\": %s", want[i].name, why);
            goto fail;
        }
        if (p > 0) continue;
        if (!create) {
            sw_log(r->log, SW_LOG_ERROR,
                   "topic \"%s\" does not exist: create it (%d partition%s, cleanup.policy=delete; "
                   "see README, Topics an operator creates) or set topics.create=on",
                   want[i].name, want[i].parts, want[i].parts == 1 ? "" : "s");
            goto fail;
        }
        char err[256];
        nt[n] = rd_kafka_NewTopic_new(want[i].name, want[i].parts, -1, err, sizeof(err));
        if (!nt[n]) {
            sw_log(r->log, SW_LOG_ERROR, "cannot create topic \"%s\": %s", want[i].name, err);
            goto fail;
        }
        names[n] = want[i].name;
        rd_kafka_NewTopic_set_config(nt[n], "cleanup.policy", "delete");
        if (want[i].retention_ms)
            rd_kafka_NewTopic_set_config(nt[n], "retention.ms", want[i].retention_ms);
        n++;
    }
    if (!n) {
        check_state_parts(r);
        return 0;
    }
    if (!sw_kafka_has_controller(r->producer)) {
        /* No Admin API to ask. A broker that creates topics on first use
         * (auto.create.topics.enable; librdkafka's mock) does so with its
         * defaults: what matters (the state topic's single partition, the
         * repartition topic's count) is checked below and at
         * sw_run_setup's end, said once with the fix. */
        int bad = 0;
        for (int k = 0; k < n; k++) {
            int i = 0;
            while (want[i].name != names[k]) i++;
            int p = sw_run_topic_partitions(r, names[k]);
            if (p > 0) {
                sw_log(r->log, SW_LOG_INFO,
                       "topic \"%s\" created by the broker with its defaults (%d partitions): "
                       "the cluster names no controller broker for the Admin API (librdkafka's "
                       "mock cluster; `stormwatch mock` given this configuration's -c/-X creates "
                       "the topics as required)",
                       names[k], p);
                continue;
            }
            char cmd[900];
            create_cmd(r, names[k], want[i].parts, want[i].retention_ms, cmd, sizeof(cmd));
            sw_log(r->log, SW_LOG_ERROR,
                   "topic \"%s\" does not exist, and the cluster at %s names no controller "
                   "broker to create it through the Admin API: create it (librdkafka's mock "
                   "cluster: `stormwatch mock` given this configuration's -c/-X creates every "
                   "topic of it, or --topic %s:%d); else: %s",
                   names[k], r->opts->bootstrap, names[k], want[i].parts, cmd);
            bad = 1;
        }
        if (bad) goto fail;
        rd_kafka_NewTopic_destroy_array(nt, (size_t)n);
        check_state_parts(r);
        return 0;
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(r->producer);
    rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(r->producer,
                                                           RD_KAFKA_ADMIN_OP_CREATETOPICS);
    char err[256];
    rd_kafka_AdminOptions_set_request_timeout(o, 10000, err, sizeof(err));
    rd_kafka_CreateTopics(r->producer, nt, (size_t)n, o, q);
    rd_kafka_event_t *ev = NULL;
    for (int i = 0; i < 150 && !ev && *r->opts->running; i++) ev = rd_kafka_queue_poll(q, 100);
    int bad = 0;
    const rd_kafka_CreateTopics_result_t *res = ev ? rd_kafka_event_CreateTopics_result(ev) : NULL;
    const rd_kafka_topic_result_t **tr = NULL;
    size_t cnt = 0;
    if (res) tr = rd_kafka_CreateTopics_result_topics(res, &cnt);
    for (int i = 0; i < n; i++) {
        const char *name = names[i];
        rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR__TIMED_OUT;
        const char *text = ev ? rd_kafka_event_error_string(ev) : "no answer in 15 s";
        for (size_t k = 0; k < cnt; k++)
            if (!strcmp(rd_kafka_topic_result_name(tr[k]), name)) {
                e = rd_kafka_topic_result_error(tr[k]);
                text = rd_kafka_topic_result_error_string(tr[k]);
            }
        if (!e || e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
            sw_log(r->log, SW_LOG_INFO, "created topic \"%s\" (topics.create=on)", name);
            continue;
        }
        /* No Admin API answer (an old broker, a cluster without a
         * controller such as librdkafka's mock): a broker that creates
         * topics on first use still can, with its defaults. */
        if (e != RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED &&
            e != RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED &&
            sw_run_topic_partitions(r, name) > 0) {
            sw_log(r->log, SW_LOG_WARN,
                   "topic \"%s\" could not be created through the Admin API (%s%s%s); the broker "
                   "auto-created it with its defaults (check its partitions and cleanup.policy)",
                   name, rd_kafka_err2name(e), text ? ": " : "", text ? text : "");
            continue;
        }
        bad = 1;
        sw_log(r->log, SW_LOG_ERROR,
               "cannot create topic \"%s\": %s%s%s (create it yourself, see README, Topics an "
               "operator creates)",
               name, rd_kafka_err2name(e), text ? ": " : "", text ? text : "");
    }
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy_array(nt, (size_t)n);
    if (bad) return 1;
    /* Until the metadata shows them (a new topic takes a moment). */
    for (int i = 0; i < nwant; i++)
        for (int k = 0; k < 50 && topic_check(r, want[i].name, NULL) < 1; k++) usleep(100000);
    check_state_parts(r);
    return 0;
fail:
    rd_kafka_NewTopic_destroy_array(nt, (size_t)n);
    return 1;
}

/* repartition=auto needs one input topic whose partitions are the
 * repartition topic's one for one, snapshots (they keep repartition p's
 * position) and at_least_once (a marker in a transaction would be seen
 * only when it commits). Otherwise it runs as on, which is always right.
 * @returns whether auto stays. */
static bool auto_fits(run_t *r)
{
    const sw_conf_strs_t *in = &r->set->kafka.input_topics;
    const char *why = NULL;
    char buf[2000];
    if (in->n != 1 || in->v[0][0] == '^') {
        why = "more than one input topic, or a pattern";
    } else if (!r->restore) {
        why = "state.restore=off (the repartition position lives in the snapshots)";
    } else if (r->eos) {
        why = "processing.guarantee=exactly_once (markers would wait for each transaction)";
    } else if (r->in_parts != r->rep_parts) {
        snprintf(buf, sizeof(buf), "%s has %d partitions, %s %d: they must be equal (%s)",
                 r->rep_topic, r->rep_parts, in->v[0], r->in_parts, r->rep_fix);
        why = buf;
    }
    if (!why) return true;
    sw_log(r->log, SW_LOG_WARN,
           "repartition=auto runs as repartition=on: %s (every message takes the hop through %s)",
           why, r->rep_topic);
    r->rep_auto = false;
    return false;
}

/* queued.max.messages.kbytes lowered to fit the container, and
 * queued.min.messages to one message a kB (fit_prefetch). */
static void set_prefetch(const run_t *r, rd_kafka_conf_t *c)
{
    char v[32], err[256];
    if (!c) return;
    if (r->prefetch_kb > 0) {
        snprintf(v, sizeof(v), "%lld", (long long)r->prefetch_kb);
        sw_kafka_set(c, "queued.max.messages.kbytes", v, err, sizeof(err));
    }
    if (r->prefetch_msg > 0) {
        snprintf(v, sizeof(v), "%lld", (long long)r->prefetch_msg);
        sw_kafka_set(c, "queued.min.messages", v, err, sizeof(err));
    }
}

/* repartition=auto: the mirror consumer, which reads repartition p for
 * whoever owns input p (a group id of its own that it never joins, no
 * subscription: librdkafka's incremental assignment needs one), and the
 * marker producer. @returns 0, or 2 (logged). */
static int start_mirror(run_t *r)
{
    char err[512], gid[400];
    snprintf(gid, sizeof(gid), "%s.mirror", r->set->kafka.group_id);
    rd_kafka_conf_t *mc = sw_kafka_conf(r->opts->conf, SW_KAFKA_CONSUMER, r->opts->bootstrap, gid,
                                        &r->kctx, err, sizeof(err));
    set_prefetch(r, mc);
    if (mc) {
        sw_kafka_set(mc, "enable.auto.commit", "false", err, sizeof(err));
        sw_kafka_set(mc, "auto.offset.reset", "earliest", err, sizeof(err));
    }
    r->mirror = mc ? rd_kafka_new(RD_KAFKA_CONSUMER, mc, err, sizeof(err)) : NULL;
    if (!r->mirror) {
        if (mc) rd_kafka_conf_destroy(mc);
        sw_log(r->log, SW_LOG_ERROR, "cannot create the repartition reader: %s", err);
        return 2;
    }
    /* The markers: nothing else to batch with, so no linger (a marker's
     * round trip is what job-keyed input waits). */
    rd_kafka_conf_t *pc = sw_kafka_conf(r->opts->conf, SW_KAFKA_PRODUCER, r->opts->bootstrap, NULL,
                                        &r->kctx, err, sizeof(err));
    if (pc) {
        sw_kafka_set(pc, "linger.ms", "0", err, sizeof(err));
        sw_kafka_set(pc, "allow.auto.create.topics", "false", err, sizeof(err));
        rd_kafka_conf_set_dr_msg_cb(pc, sw_run_dr_cb);
    }
    r->mprod = pc ? rd_kafka_new(RD_KAFKA_PRODUCER, pc, err, sizeof(err)) : NULL;
    if (!r->mprod) {
        if (pc) rd_kafka_conf_destroy(pc);
        sw_log(r->log, SW_LOG_ERROR, "cannot create the marker producer: %s", err);
        return 2;
    }
    r->pass.rep_parts = r->rep_parts;
    return 0;
}

/* The group's consumer (not subscribed yet). @returns 0, or 2 (logged). */
static int make_consumer(run_t *r, const sw_run_group_cbs_t *cbs)
{
    char err[512];
    rd_kafka_conf_t *cc = sw_kafka_conf(r->opts->conf, SW_KAFKA_CONSUMER, r->opts->bootstrap,
                                        r->set->kafka.group_id, &r->kctx, err, sizeof(err));
    if (!cc) {
        sw_log(r->log, SW_LOG_ERROR, "%s", err);
        return 2;
    }
    if (r->eos) sw_kafka_set(cc, "isolation.level", "read_committed", err, sizeof(err));
    set_prefetch(r, cc);
    rd_kafka_conf_set_rebalance_cb(cc, cbs->rebalance);
    rd_kafka_conf_set_offset_commit_cb(cc, cbs->offset_commit);
    r->consumer = rd_kafka_new(RD_KAFKA_CONSUMER, cc, err, sizeof(err));
    if (!r->consumer) {
        rd_kafka_conf_destroy(cc);
        sw_log(r->log, SW_LOG_ERROR, "cannot create the consumer: %s", err);
        return 2;
    }
    rd_kafka_poll_set_consumer(r->consumer);
    return 0;
}

/* What the consumers may prefetch (per partition, over every input and
 * repartition partition this member may be assigned) beside the engines'
 * budget, against the container's memory limit (sw_run_mem.c): when it
 * does not fit, the consumer (not subscribed yet) is made again with the
 * lowered value, and so is the repartition reader. The kB bound counts
 * payload only, and librdkafka keeps about 400 bytes beside each message:
 * small messages (a flood of one-sample job ids: 130 bytes) cost 3-4
 * times their kB. So that the kB bound holds for them too, at most one
 * message a kB is prefetched (queued.min.messages). @returns 0, or 2. */
static int fit_prefetch(run_t *r, const sw_run_group_cbs_t *cbs)
{
    char v[32];
    size_t n = sizeof(v);
    if (rd_kafka_conf_get(rd_kafka_conf(r->consumer), "queued.max.messages.kbytes", v, &n) !=
        RD_KAFKA_CONF_OK)
        return 0;
    int64_t kb = strtoll(v, NULL, 10);
    n = sizeof(v);
    int64_t msgs = rd_kafka_conf_get(rd_kafka_conf(r->consumer), "queued.min.messages", v, &n) ==
                           RD_KAFKA_CONF_OK
                       ? strtoll(v, NULL, 10)
                       : 0;
    int parts = r->rep_topic ? r->rep_parts : 0;
    const sw_conf_strs_t *in = &r->set->kafka.input_topics;
    for (size_t i = 0; i < in->n; i++) {
        int k = in->v[i][0] == '^' ? 0 : sw_run_topic_partitions(r, in->v[i]);
        parts += k > 0 ? k : 0;
    }
    int64_t fit = sw_run_prefetch_fit(r, kb, parts);
    if (fit > 0 && msgs > fit) r->prefetch_msg = fit;
    if (fit == kb && !r->prefetch_msg) return 0;
    if (fit != kb) r->prefetch_kb = fit;
    rd_kafka_destroy(r->consumer);
    r->consumer = NULL;
    return make_consumer(r, cbs);
}

int sw_run_setup(run_t *r, const sw_run_group_cbs_t *cbs)
{
    const sw_conf_t *conf = r->opts->conf;
    char err[512];
    rd_kafka_conf_t *pc = sw_kafka_conf(conf, SW_KAFKA_PRODUCER, r->opts->bootstrap, NULL, &r->kctx,
                                        err, sizeof(err));
    if (!pc) {
        sw_log(r->log, SW_LOG_ERROR, "%s", err);
        return 2;
    }
    /* Records are keyed by job_id, the null job's by an empty key, which
     * librdkafka's default partitioner (consistent_random) spreads with its
     * sticky partitioner: one null job's trigger and summary could land on
     * two partitions and be read out of order. `consistent` hashes keyed
     * records as the default does (CRC32) and sends every empty key to one
     * partition. Records with a partition of their own are not affected. */
    if (!(conf && sw_conf_passthrough_is_set(conf, SW_CONF_SCOPE_PRODUCER, "partitioner")) &&
        sw_kafka_set(pc, "partitioner", "consistent", err, sizeof(err))) {
        sw_log(r->log, SW_LOG_ERROR, "%s", err);
        rd_kafka_conf_destroy(pc);
        return 2;
    }
    if (r->eos) {
        char tid[512], host[128] = "host";
        gethostname(host, sizeof(host) - 1);
        snprintf(tid, sizeof(tid), "stormwatch-%s-%s-%d", r->set->kafka.group_id, host,
                 (int)getpid());
        if (sw_kafka_set(pc, "transactional.id", tid, err, sizeof(err))) {
            sw_log(r->log, SW_LOG_ERROR, "%s", err);
            rd_kafka_conf_destroy(pc);
            return 2;
        }
    }
    /* Topics are checked and created by ensure_topics(), with their
     * settings, never auto-created by a broker's defaults. */
    sw_kafka_set(pc, "allow.auto.create.topics", "false", err, sizeof(err));
    rd_kafka_conf_set_dr_msg_cb(pc, sw_run_dr_cb);
    /* What the producer takes at most (key, value and headers together):
     * records are kept under it with room for the headers we add. */
    char mmb[32];
    size_t mmb_len = sizeof(mmb);
    long max_bytes = 1000000;
    if (rd_kafka_conf_get(pc, "message.max.bytes", mmb, &mmb_len) == RD_KAFKA_CONF_OK)
        max_bytes = strtol(mmb, NULL, 10);
    r->max_value = max_bytes > 16384 ? (size_t)max_bytes - 8192 : (size_t)max_bytes / 2;
    /* First contact before any client: a refused or unresolvable address
     * is said at once, in one line, and no client repeats it. */
    if (!sw_kafka_wait_reachable(pc, r->log, r->opts->running)) {
        rd_kafka_conf_destroy(pc);
        return -1;
    }
    r->producer = rd_kafka_new(RD_KAFKA_PRODUCER, pc, err, sizeof(err));
    if (!r->producer) {
        rd_kafka_conf_destroy(pc);
        sw_log(r->log, SW_LOG_ERROR, "cannot create the producer: %s", err);
        return 2;
    }
    if (r->eos) {
        if (!sw_run_txn_ok(r, rd_kafka_init_transactions(r->producer, 60000), "init_transactions"))
            return 1;
        if (!sw_run_txn_begin(r)) return 1;
    }
    if (make_consumer(r, cbs)) return 2;
    if (!wait_cluster(r)) return r->kctx.fatal ? 1 : -1;
    if (ensure_topics(r)) return 1;
    if (r->restore) {
        rd_kafka_conf_t *rc = sw_kafka_conf(conf, SW_KAFKA_CONSUMER, r->opts->bootstrap,
                                            "stormwatch-state-reader", &r->kctx, err, sizeof(err));
        if (rc && r->eos) sw_kafka_set(rc, "isolation.level", "read_committed", err, sizeof(err));
        r->reader = rc ? rd_kafka_new(RD_KAFKA_CONSUMER, rc, err, sizeof(err)) : NULL;
        if (!r->reader) {
            sw_log(r->log, SW_LOG_ERROR, "cannot create the state reader: %s", err);
            return 2;
        }
        r->out_parts = sw_run_topic_partitions(r, r->out_topic);
        r->dlq_parts = sw_run_topic_partitions(r, r->dlq_topic);
    }
    if (r->rep_topic) {
        r->rep_parts = sw_run_topic_partitions(r, r->rep_topic);
        if (r->rep_parts < 1) {
            sw_log(r->log, SW_LOG_ERROR, "cannot read the partitions of \"%s\" (repartition.topic)",
                   r->rep_topic);
            return 1;
        }
        /* The fix of a count that differs from the input's: more
         * partitions can be added; fewer means recreating the topic. */
        if (r->in_parts > 0 && r->in_parts != r->rep_parts) {
            char cmd[900];
            create_cmd(r, r->rep_topic, r->in_parts, "604800000", cmd, sizeof(cmd));
            if (r->in_parts > r->rep_parts)
                snprintf(r->rep_fix, sizeof(r->rep_fix),
                         "kafka-topics.sh --bootstrap-server %s --alter --topic %s --partitions "
                         "%d",
                         r->opts->bootstrap, r->rep_topic, r->in_parts);
            else
                snprintf(r->rep_fix, sizeof(r->rep_fix),
                         "while no stormwatch run of the group runs: kafka-topics.sh "
                         "--bootstrap-server %s --delete --topic %s; %s",
                         r->opts->bootstrap, r->rep_topic, cmd);
        }
        /* Any count is right (a job's partition is the group's hash of its
         * job_id mod the count); it only bounds how many engines share the work. Said
         * here unless repartition=auto says it (auto_fits). */
        if (r->in_parts > r->rep_parts && !r->rep_auto)
            sw_log(r->log, SW_LOG_WARN,
                   "%s has %d partitions, fewer than %s's %d: at most %d instances analyse "
                   "(changing its count moves jobs between engines: do it while no storm is "
                   "open: %s)",
                   r->rep_topic, r->rep_parts, r->set->kafka.input_topics.v[0], r->in_parts,
                   r->rep_parts, r->rep_fix);
    }
    if (fit_prefetch(r, cbs)) return 2;
    if (r->rep_auto) auto_fits(r);
    sw_run_members_start(r, r->mode_as); /* may run auto as on (a member of the group runs on) */
    if (r->rep_auto) {
        if (start_mirror(r)) return 2;
        sw_run_keying_start(r);
    }
    if (r->restore) {
        /* End offsets now: every later record of ours lands at or after. */
        int npos = r->out_parts + r->dlq_parts + (r->rep_topic ? r->rep_parts : 0);
        r->out_pos = sw_malloc(((size_t)npos + 1) * sizeof(*r->out_pos));
        for (int t = 0, k = 0, tn; sw_run_pos_topic(r, t, &tn); t++)
            for (int q = 0; q < tn; q++, k++) {
                int64_t lo, hi;
                r->out_pos[k] = rd_kafka_query_watermark_offsets(
                                    r->producer, sw_run_pos_topic(r, t, &tn), q, &lo, &hi, 10000)
                                    ? -1
                                    : hi;
            }
    }
    return subscribe(r);
}

bool sw_run_repartition_topic(const sw_settings_t *set, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!set->delivery.repartition) return false;
    const char *rt = set->delivery.repartition_topic;
    if (rt[0]) snprintf(buf, size, "%s", rt);
    else snprintf(buf, size, "%s.repartition", set->kafka.group_id);
    return true;
}
