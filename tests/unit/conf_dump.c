/* The helpers of conf_dump.h. */
#include "conf_dump.h"

/* Every property with its default, in table order: the expected dump of a
 * fresh configuration. */
const conf_default_t defaults[] = {
    {"bootstrap.servers", ""},
    {"group.id", "stormwatch"},
    {"input.topics", "stormwatch.telemetry"},
    {"output.topic", "stormwatch.alerts"},
    {"dlq.topic", "stormwatch.dlq"},
    {"input.format", "auto"},
    {"output.format", "json"},
    {"avro.schema.id.telemetry", "1"},
    {"avro.schema.id.alert", "2"},
    {"avro.schema.ids.telemetry", ""},
    {"schema.registry.url", ""},
    {"schema.registry.basic.auth.user.info", "[redacted, unset]"},
    {"schema.registry.ssl.ca.location", ""},
    {"schema.registry.ssl.certificate.location", ""},
    {"schema.registry.ssl.key.location", "[redacted, unset]"},
    {"schema.registry.request.timeout.ms", "5000"},
    {"auto.register.schemas", "true"},
    {"pagerduty.routing.key", "[redacted, unset]"},
    {"alertmanager.generator.url", ""},
    {"alertmanager.labels", ""},
    {"alertmanager.ends.after.ms", "900000"},
    {"window.samples", "512"},
    {"stale.ms", "60000"},
    {"silence.ms", "30000"},
    {"oom.warn.ms", "120000"},
    {"oom.warn.headroom", "0.1"},
    {"spike.min.bytes", "67108864"},
    {"spike.fraction", "0.1"},
    {"skew.note.multiplier", "5"},
    {"job.idle.ms", "300000"},
    {"max.jobs", "10000"},
    {"max.ranks.per.job", "131072"},
    {"max.memory.bytes", "644245094"},
    {"processing.guarantee", "at_least_once"},
    {"commit.interval.ms", "1000"},
    {"shutdown.timeout.ms", "30000"},
    {"worker.threads", "0"},
    {"topics.create", "on"},
    {"state.restore", "on"},
    {"state.topic", "stormwatch.state"},
    {"repartition", "auto"},
    {"repartition.partitioner", "auto"},
    {"repartition.topic", ""},
    {"snapshot.interval.ms", "10000"},
    {"metrics.listen", ""},
    {"health.listen", ""},
    {"metrics.hosts.max", "200"},
    {"ready.max.lag", "10000"},
    {"log.level", "info"},
    {"mock.brokers", "3"},
    {"mock.partitions", "8"},
    {"notify.group.id", "stormwatch-notify"},
    {"notify.dlq.topic", "stormwatch.notify.dlq"},
    {"notify.retry.backoff.ms", "500"},
    {"notify.retry.backoff.max.ms", "60000"},
    {"alertmanager.url", ""},
    {"alertmanager.resend.ms", "60000"},
    {"alertmanager.timeout.ms", "10000"},
    {"alertmanager.auth.bearer.token", "[redacted, unset]"},
    {"alertmanager.auth.basic", "[redacted, unset]"},
    {"alertmanager.ssl.ca.location", ""},
    {"alertmanager.rate.limit", "0"},
    {"pagerduty.url", "https://events.pagerduty.com/v2/enqueue"},
    {"pagerduty.timeout.ms", "10000"},
    {"pagerduty.auth.bearer.token", "[redacted, unset]"},
    {"pagerduty.auth.basic", "[redacted, unset]"},
    {"pagerduty.ssl.ca.location", ""},
    {"pagerduty.rate.limit", "2"},
    {"webhook.url", ""},
    {"webhook.hmac.secret", "[redacted, unset]"},
    {"webhook.timeout.ms", "10000"},
    {"webhook.auth.bearer.token", "[redacted, unset]"},
    {"webhook.auth.basic", "[redacted, unset]"},
    {"webhook.ssl.ca.location", ""},
    {"webhook.rate.limit", "0"},
};

const size_t n_defaults = sizeof(defaults) / sizeof(defaults[0]);

/* The dump of @p conf, preceded by "\n" with @p nl so that every line can
 * be searched for as "\nname=value\n". */
char *dump_of2(const sw_conf_t *conf, bool nl)
{
    sw_buf_t out;
    sw_buf_init(&out);
    if (nl) sw_buf_putc(&out, '\n');
    sw_conf_dump(conf, &out);
    char *s = sw_memdup0(out.data, out.len);
    sw_buf_clear(&out);
    return s;
}
