/*
 * The control protocol of `stormwatch mock --control` (see
 * sw_mock_control.h): one command per line, run against the mock cluster:
 * topics, brokers down/up and their round-trip time, request errors by
 * API, partition leaders and coordinators. Errors name the word that is
 * wrong and what was expected.
 */
#include "sw_mock_control.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"

/* Kafka API keys by protocol name (the requests the mock answers that
 * stormwatch's clients send). */
static const struct {
    const char *name;
    int16_t key;
} k_apis[] = {
    {"Produce", 0},
    {"Fetch", 1},
    {"ListOffsets", 2},
    {"Metadata", 3},
    {"OffsetCommit", 8},
    {"OffsetFetch", 9},
    {"FindCoordinator", 10},
    {"JoinGroup", 11},
    {"Heartbeat", 12},
    {"LeaveGroup", 13},
    {"SyncGroup", 14},
    {"DescribeGroups", 15},
    {"ApiVersions", 18},
    {"InitProducerId", 22},
    {"OffsetForLeaderEpoch", 23},
    {"AddPartitionsToTxn", 24},
    {"AddOffsetsToTxn", 25},
    {"EndTxn", 26},
    {"TxnOffsetCommit", 28},
};
#define N_APIS (sizeof(k_apis) / sizeof(k_apis[0]))

/* Topic names as Kafka allows them: 1..249 of [a-zA-Z0-9._-]. */
bool sw_mock_topic_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 249) return false;
    if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return false; /* Kafka reserves them */
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* A decimal integer in [min, max]; false with errstr naming what. */
static bool parse_ll(const char *what, const char *s, long long min, long long max, long long *out,
                     char *errstr, size_t errstr_size)
{
    char *end = NULL;
    errno = 0;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || end == s || *end != '\0' || errno == ERANGE || v < min || v > max) {
        snprintf(errstr, errstr_size, "%s \"%s\" is not an integer in %lld..%lld", what, s ? s : "",
                 min, max);
        return false;
    }
    *out = v;
    return true;
}

static bool api_by_name(const char *name, int16_t *key, char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < N_APIS; i++)
        if (strcasecmp(name, k_apis[i].name) == 0) {
            *key = k_apis[i].key;
            return true;
        }
    size_t n = (size_t)snprintf(errstr, errstr_size, "unknown request \"%s\" (expected one of",
                                name);
    for (size_t i = 0; i < N_APIS && n < errstr_size; i++)
        n += (size_t)snprintf(errstr + n, errstr_size - n, "%s %s", i ? "," : "", k_apis[i].name);
    if (n < errstr_size) snprintf(errstr + n, errstr_size - n, ")");
    return false;
}

/* A librdkafka error by name: "NOT_LEADER_FOR_PARTITION", "_TRANSPORT",
 * with or without the RD_KAFKA_RESP_ERR_ prefix, any case. */
static bool err_by_name(const char *name, rd_kafka_resp_err_t *err, char *errstr,
                        size_t errstr_size)
{
    static const char prefix[] = "RD_KAFKA_RESP_ERR_";
    if (strncasecmp(name, prefix, sizeof(prefix) - 1) == 0) name += sizeof(prefix) - 1;
    const struct rd_kafka_err_desc *descs;
    size_t cnt;
    rd_kafka_get_err_descs(&descs, &cnt);
    for (size_t i = 0; i < cnt; i++)
        if (descs[i].name && strcasecmp(descs[i].name, name) == 0) {
            *err = descs[i].code;
            return true;
        }
    snprintf(errstr, errstr_size,
             "unknown error name \"%s\" (expected a librdkafka error name such as "
             "NOT_LEADER_FOR_PARTITION, REQUEST_TIMED_OUT or _TRANSPORT)",
             name);
    return false;
}

static bool broker_id(const sw_mockctl_t *mk, const char *s, int32_t *id, char *errstr,
                      size_t errstr_size)
{
    long long v;
    if (!parse_ll("broker id", s, -1, mk->brokers, &v, errstr, errstr_size) || v == 0) {
        snprintf(errstr, errstr_size, "broker id \"%s\" is not 1..%d or -1 (all)", s ? s : "",
                 mk->brokers);
        return false;
    }
    *id = (int32_t)v;
    return true;
}

static bool rk_ok(rd_kafka_resp_err_t err, char *errstr, size_t errstr_size)
{
    if (!err) return true;
    snprintf(errstr, errstr_size, "%s: %s", rd_kafka_err2name(err), rd_kafka_err2str(err));
    return false;
}

static bool cmd_errors(sw_mockctl_t *mk, char **tok, int ntok, char *errstr, size_t errstr_size)
{
    int16_t api;
    long long cnt;
    if (ntok != 4) {
        snprintf(errstr, errstr_size, "usage: errors REQUEST COUNT ERRNAME[,ERRNAME...]");
        return false;
    }
    if (!api_by_name(tok[1], &api, errstr, errstr_size)) return false;
    if (!parse_ll("count", tok[2], 1, 100000, &cnt, errstr, errstr_size)) return false;
    rd_kafka_resp_err_t names[64];
    size_t nnames = 0;
    char *save = NULL;
    for (char *e = strtok_r(tok[3], ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        if (nnames == sizeof(names) / sizeof(names[0])) {
            snprintf(errstr, errstr_size, "more than %zu error names", nnames);
            return false;
        }
        if (!err_by_name(e, &names[nnames], errstr, errstr_size)) return false;
        nnames++;
    }
    if (nnames == 0) {
        snprintf(errstr, errstr_size, "no error name given");
        return false;
    }
    rd_kafka_resp_err_t *errs = sw_calloc((size_t)cnt, sizeof(*errs));
    for (long long i = 0; i < cnt; i++) errs[i] = names[(size_t)i % nnames];
    rd_kafka_mock_push_request_errors_array(sw_mock_cluster(mk->m), api, (size_t)cnt, errs);
    free(errs);
    return true;
}

bool sw_mockctl_line(sw_mockctl_t *mk, char *line, char *errstr, size_t errstr_size)
{
    char *tok[8];
    int ntok = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        if (ntok == (int)(sizeof(tok) / sizeof(tok[0]))) {
            snprintf(errstr, errstr_size, "too many words");
            return false;
        }
        tok[ntok++] = t;
    }
    if (ntok == 0) {
        snprintf(errstr, errstr_size, "empty command");
        return false;
    }
    const char *cmd = tok[0];
    int32_t id;
    long long v, w;
    if (!strcmp(cmd, "quit")) {
        mk->quit = true;
        return true;
    }
    if (!strcmp(cmd, "topic")) {
        if (ntok != 3) {
            snprintf(errstr, errstr_size, "usage: topic NAME PARTITIONS");
            return false;
        }
        if (!sw_mock_topic_name_ok(tok[1], strlen(tok[1]))) {
            snprintf(errstr, errstr_size,
                     "topic name \"%s\" is not 1..249 characters of [a-zA-Z0-9._-]", tok[1]);
            return false;
        }
        if (!parse_ll("partitions", tok[2], 1, 100000, &v, errstr, errstr_size)) return false;
        return sw_mock_topic(mk->m, tok[1], (int)v, errstr, errstr_size) == SW_OK;
    }
    if (!strcmp(cmd, "broker")) {
        bool rtt = ntok >= 2 && !strcmp(tok[1], "rtt");
        bool updown = ntok >= 2 && (!strcmp(tok[1], "down") || !strcmp(tok[1], "up"));
        if (!(updown && ntok == 3) && !(rtt && ntok == 4)) {
            snprintf(errstr, errstr_size, "usage: broker down|up BROKER, or broker rtt BROKER MS");
            return false;
        }
        if (!broker_id(mk, tok[2], &id, errstr, errstr_size)) return false;
        if (rtt) {
            if (!parse_ll("rtt", tok[3], 0, 3600000, &v, errstr, errstr_size)) return false;
            return rk_ok(rd_kafka_mock_broker_set_rtt(sw_mock_cluster(mk->m), id, (int)v), errstr,
                         errstr_size);
        }
        return rk_ok(!strcmp(tok[1], "down")
                         ? rd_kafka_mock_broker_set_down(sw_mock_cluster(mk->m), id)
                         : rd_kafka_mock_broker_set_up(sw_mock_cluster(mk->m), id),
                     errstr, errstr_size);
    }
    if (!strcmp(cmd, "errors")) return cmd_errors(mk, tok, ntok, errstr, errstr_size);
    if (!strcmp(cmd, "clear")) {
        int16_t api;
        if (ntok > 2) {
            snprintf(errstr, errstr_size, "usage: clear [REQUEST]");
            return false;
        }
        if (ntok == 2) {
            if (!api_by_name(tok[1], &api, errstr, errstr_size)) return false;
            rd_kafka_mock_clear_request_errors(sw_mock_cluster(mk->m), api);
            return true;
        }
        for (size_t i = 0; i < N_APIS; i++)
            rd_kafka_mock_clear_request_errors(sw_mock_cluster(mk->m), k_apis[i].key);
        return true;
    }
    if (!strcmp(cmd, "leader")) {
        if (ntok != 4) {
            snprintf(errstr, errstr_size, "usage: leader TOPIC PARTITION BROKER");
            return false;
        }
        if (!parse_ll("partition", tok[2], 0, 100000, &v, errstr, errstr_size)) return false;
        if (!parse_ll("broker id", tok[3], -1, mk->brokers, &w, errstr, errstr_size) || w == 0) {
            snprintf(errstr, errstr_size, "broker id \"%s\" is not 1..%d or -1 (no leader)", tok[3],
                     mk->brokers);
            return false;
        }
        return rk_ok(rd_kafka_mock_partition_set_leader(sw_mock_cluster(mk->m), tok[1], (int32_t)v,
                                                        (int32_t)w),
                     errstr, errstr_size);
    }
    if (!strcmp(cmd, "coordinator")) {
        if (ntok != 4 || (strcmp(tok[1], "group") && strcmp(tok[1], "transaction"))) {
            snprintf(errstr, errstr_size, "usage: coordinator group|transaction KEY BROKER");
            return false;
        }
        if (!broker_id(mk, tok[3], &id, errstr, errstr_size) || id < 1) {
            snprintf(errstr, errstr_size, "broker id \"%s\" is not 1..%d", tok[3], mk->brokers);
            return false;
        }
        return rk_ok(rd_kafka_mock_coordinator_set(sw_mock_cluster(mk->m), tok[1], tok[2], id),
                     errstr, errstr_size);
    }
    snprintf(errstr, errstr_size,
             "unknown command \"%s\" (expected topic, broker, errors, clear, leader, "
             "coordinator or quit)",
             cmd);
    return false;
}
