/*
 * sw_conf_settings() (see sw_conf.h): the table's current values into the
 * typed sw_settings_t, once, by property id; and the ranges of int and
 * double properties for command-line options that set the same quantity.
 */
#include <string.h>

#include "sw_conf.h"
#include "sw_conf_int.h"

/* Position of an enum property's value among its allowed values (the
 * typed enums of sw_conf.h follow that order). */
static int enum_idx(const sw_conf_t *conf, enum prop_id id)
{
    const char *const *allowed = sw_conf_props[id].allowed;
    for (int k = 0; allowed[k]; k++)
        if (strcmp(allowed[k], conf->vals[id].text) == 0) return k;
    return 0; /* not reached: values are checked when set */
}

/* on_off properties: "on" is the first allowed value. */
static bool is_on(const sw_conf_t *conf, enum prop_id id)
{
    return enum_idx(conf, id) == 0;
}

static const char *str(const sw_conf_t *conf, enum prop_id id)
{
    return conf->vals[id].text;
}

static sw_conf_strs_t strs(const sw_conf_t *conf, enum prop_id id)
{
    return (sw_conf_strs_t){(const char *const *)conf->vals[id].elems, conf->vals[id].n_elems};
}

static int64_t i64(const sw_conf_t *conf, enum prop_id id)
{
    return conf->vals[id].i;
}

static sw_settings_sink_t sink(const sw_conf_t *conf, enum prop_id url, enum prop_id timeout,
                               enum prop_id bearer, enum prop_id basic, enum prop_id ca,
                               enum prop_id rate)
{
    return (sw_settings_sink_t){
        .url = str(conf, url),
        .timeout_ms = i64(conf, timeout),
        .bearer_token = str(conf, bearer),
        .basic_auth = str(conf, basic),
        .ca_location = str(conf, ca),
        .rate_limit = conf->vals[rate].d,
    };
}

void sw_conf_settings(const sw_conf_t *conf, sw_settings_t *set)
{
    memset(set, 0, sizeof(*set));
    set->kafka = (sw_settings_kafka_t){
        .bootstrap_servers = str(conf, P_BOOTSTRAP_SERVERS),
        .group_id = str(conf, P_GROUP_ID),
        .input_topics = strs(conf, P_INPUT_TOPICS),
        .output_topic = str(conf, P_OUTPUT_TOPIC),
        .dlq_topic = str(conf, P_DLQ_TOPIC),
    };
    set->format = (sw_settings_format_t){
        .input = (sw_in_format_t)enum_idx(conf, P_INPUT_FORMAT),
        .output = (sw_out_format_t)enum_idx(conf, P_OUTPUT_FORMAT),
        .schema_id_telemetry = (int32_t)i64(conf, P_AVRO_SCHEMA_ID_TELEMETRY),
        .schema_id_alert = (int32_t)i64(conf, P_AVRO_SCHEMA_ID_ALERT),
        .schema_ids_telemetry = strs(conf, P_AVRO_SCHEMA_IDS_TELEMETRY),
    };
    set->registry = (sw_settings_registry_t){
        .urls = strs(conf, P_SCHEMA_REGISTRY_URL),
        .user_info = str(conf, P_SCHEMA_REGISTRY_USER_INFO),
        .ca_location = str(conf, P_SCHEMA_REGISTRY_CA),
        .cert_location = str(conf, P_SCHEMA_REGISTRY_CERT),
        .key_location = str(conf, P_SCHEMA_REGISTRY_KEY),
        .timeout_ms = i64(conf, P_SCHEMA_REGISTRY_TIMEOUT_MS),
        .auto_register = conf->vals[P_AUTO_REGISTER_SCHEMAS].b,
    };
    set->pager = (sw_settings_pager_t){
        .routing_key = str(conf, P_PAGERDUTY_ROUTING_KEY),
        .generator_url = str(conf, P_ALERTMANAGER_GENERATOR_URL),
        .labels = str(conf, P_ALERTMANAGER_LABELS),
        .ends_after_ms = i64(conf, P_ALERTMANAGER_ENDS_AFTER_MS),
    };
    set->engine = (sw_settings_engine_t){
        .params = sw_conf_params(conf),
        .job_idle_ms = i64(conf, P_JOB_IDLE_MS),
        .max_memory_bytes = i64(conf, P_MAX_MEMORY_BYTES),
    };
    sw_guarantee_t guarantee = (sw_guarantee_t)enum_idx(conf, P_PROCESSING_GUARANTEE);
    set->delivery = (sw_settings_delivery_t){
        .guarantee = guarantee,
        /* Transactions hold alerts until they commit: Kafka Streams' 100 ms
         * unless the user chose an interval. */
        .commit_interval_ms = guarantee == SW_GUARANTEE_EXACTLY_ONCE &&
                                      !conf->vals[P_COMMIT_INTERVAL_MS].set
                                  ? 100
                                  : i64(conf, P_COMMIT_INTERVAL_MS),
        .shutdown_timeout_ms = i64(conf, P_SHUTDOWN_TIMEOUT_MS),
        .worker_threads = (int)i64(conf, P_WORKER_THREADS),
        .topics_create = is_on(conf, P_TOPICS_CREATE),
        .state_restore = is_on(conf, P_STATE_RESTORE),
        .state_topic = str(conf, P_STATE_TOPIC),
        .snapshot_interval_ms = i64(conf, P_SNAPSHOT_INTERVAL_MS),
        .repartition = is_on(conf, P_REPARTITION),
        .repartition_topic = str(conf, P_REPARTITION_TOPIC),
    };
    set->ops = (sw_settings_ops_t){
        .log_level = (sw_log_level_t)enum_idx(conf, P_LOG_LEVEL),
        .metrics_listen = str(conf, P_METRICS_LISTEN),
        .health_listen = str(conf, P_HEALTH_LISTEN),
        .ready_max_lag = i64(conf, P_READY_MAX_LAG),
        .mock_brokers = (int)i64(conf, P_MOCK_BROKERS),
        .mock_partitions = (int)i64(conf, P_MOCK_PARTITIONS),
    };
    set->notify = (sw_settings_notify_t){
        .group_id = str(conf, P_NOTIFY_GROUP_ID),
        .dlq_topic = str(conf, P_NOTIFY_DLQ_TOPIC),
        .retry_backoff_ms = i64(conf, P_NOTIFY_RETRY_BACKOFF_MS),
        .retry_backoff_max_ms = i64(conf, P_NOTIFY_RETRY_BACKOFF_MAX_MS),
        .commit_interval_ms = i64(conf, P_COMMIT_INTERVAL_MS),
        .alertmanager_resend_ms = i64(conf, P_ALERTMANAGER_RESEND_MS),
        .webhook_hmac_secret = str(conf, P_WEBHOOK_HMAC_SECRET),
        .alertmanager = sink(conf, P_ALERTMANAGER_URL, P_ALERTMANAGER_TIMEOUT_MS,
                             P_ALERTMANAGER_AUTH_BEARER_TOKEN, P_ALERTMANAGER_AUTH_BASIC,
                             P_ALERTMANAGER_SSL_CA_LOCATION, P_ALERTMANAGER_RATE_LIMIT),
        .pagerduty = sink(conf, P_PAGERDUTY_URL, P_PAGERDUTY_TIMEOUT_MS,
                          P_PAGERDUTY_AUTH_BEARER_TOKEN, P_PAGERDUTY_AUTH_BASIC,
                          P_PAGERDUTY_SSL_CA_LOCATION, P_PAGERDUTY_RATE_LIMIT),
        .webhook = sink(conf, P_WEBHOOK_URL, P_WEBHOOK_TIMEOUT_MS, P_WEBHOOK_AUTH_BEARER_TOKEN,
                        P_WEBHOOK_AUTH_BASIC, P_WEBHOOK_SSL_CA_LOCATION, P_WEBHOOK_RATE_LIMIT),
    };
}

/* The table row of @p name when it has type @p type. */
static const prop_t *typed_prop(const char *name, prop_type_t type)
{
    for (size_t i = 0; i < P__CNT; i++)
        if (strcmp(sw_conf_props[i].name, name) == 0)
            return sw_conf_props[i].type == type ? &sw_conf_props[i] : NULL;
    return NULL;
}

bool sw_conf_range_i64(const char *name, int64_t *minp, int64_t *maxp)
{
    const prop_t *prop = typed_prop(name, PROP_INT);
    if (!prop) return false;
    *minp = prop->min;
    *maxp = prop->max;
    return true;
}

bool sw_conf_range_dbl(const char *name, double *minp, double *maxp)
{
    const prop_t *prop = typed_prop(name, PROP_DBL);
    if (!prop) return false;
    *minp = prop->dmin;
    *maxp = prop->dmax;
    return true;
}
