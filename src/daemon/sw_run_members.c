/*
 * What a group's members run (issue 35 point 1). Every member with a
 * repartition topic announces, once a second, its version and its
 * repartition mode for each partition it owns: a commit of the group
 * <group.id>.members (which nobody joins) on that partition, whose offset
 * is the wall-clock time in ms and whose metadata is
 * "swmember1:ID:VERSION:CONFIGURED:RUNNING". Every member reads every
 * partition's announcement, so every member sees the same group:
 *  - a member announcing repartition=on (configured or running), or a
 *    member that does not announce (a release before this one, which
 *    commits the group's offsets of a partition nobody announced), means
 *    the group runs on; a member configured auto then runs as on
 *    ("follows"), so that no job is analysed in two places and no marker
 *    reaches an `on` engine;
 *  - once no such member has been seen for SETTLE_MS, a follower stops
 *    (a graceful stop: snapshots committed) and starts again as auto
 *    (sw_run.c), taking the `on` engines' state (sw_run_state.c); it
 *    starts analysing as auto only when no other member still announces
 *    `on` (they switch at the same time, within a second or two);
 *  - a member running auto that sees an `on` member stops and starts
 *    again as on.
 * At a first start, a group whose repartition partitions carry an `on`
 * engine's snapshot reference (and no member announcing auto) is taken
 * as running on: this member follows until SETTLE_MS pass without an
 * unannounced commit. Members running auto mark the repartition
 * partitions' commits "swauto1" (sw_run_state.c), so a later start knows
 * the group left `on`, and an older binary refuses them by name.
 * The consume loop never waits for the reading: both groups' commits are
 * asked for with librdkafka's admin ListConsumerGroupOffsets (one request
 * a group, results on a queue of their own), taken when they are in; a
 * coordinator in trouble delays what this member learns, not its input.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sw_run_int.h"
#include "sw_run_members.h"
#include "sw_run_out.h"

#ifndef SW_VERSION
#define SW_VERSION "unknown"
#endif

#define ANNOUNCE_MS 1000  /* how often a member announces and reads */
#define FRESH_MS 5000     /* an announcement older than this is a member gone */
#define SETTLE_MS 20000   /* no `on` member for this long: a follower switches */
#define WAIT_MAX_MS 40000 /* a start waits at most this for peers to switch */
#define RECENT_MS \
    30000 /* a member configured auto announced this recently: the
                             group is not one of an earlier release alone */
#define PREFIX "swmember1:"
#define READ_TIMEOUT_MS 5000 /* a reading's requests end (an error) within this */
/* An input partition announced once (by a member of this release, since
 * gone) and named by no announcement for this long is held by a member
 * that does not announce: longer than a member of this release takes to
 * restart (a switch waits up to WAIT_MAX_MS for its peers). */
#define HELD_MS 60000

static const char *mode_name(int m)
{
    return m == 2 ? "auto" : m == 1 ? "on" : "off";
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One partition's announcement. */
typedef struct ann_s {
    bool fresh;
    uint64_t id;
    int pref, eff; /* 0 off, 1 on, 2 auto */
    char version[32];
} ann_t;

static int parse_mode(const char *s, size_t n)
{
    if (n == 4 && !memcmp(s, "auto", 4)) return 2;
    if (n == 2 && !memcmp(s, "on", 2)) return 1;
    if (n == 3 && !memcmp(s, "off", 3)) return 0;
    return -1;
}

/* "swmember1:ID:VERSION:PREF:EFF" into @p a. @returns whether it is one. */
static bool parse_ann(const void *md, size_t len, ann_t *a)
{
    char buf[160];
    size_t pl = strlen(PREFIX);
    if (!md || len <= pl || len >= sizeof(buf) || memcmp(md, PREFIX, pl)) return false;
    memcpy(buf, md, len);
    buf[len] = '\0';
    char *f[4], *s = buf + pl;
    for (int i = 0; i < 4; i++) {
        f[i] = s;
        char *c = strchr(s, ':');
        if (i < 3) {
            if (!c) return false;
            *c = '\0';
            s = c + 1;
        } else if (c) {
            return false;
        }
    }
    char *end;
    a->id = strtoull(f[0], &end, 16);
    if (*end || end == f[0]) return false;
    snprintf(a->version, sizeof(a->version), "%s", f[1]);
    a->pref = parse_mode(f[2], strlen(f[2]));
    a->eff = parse_mode(f[3], strlen(f[3]));
    return a->pref >= 0 && a->eff >= 0;
}

/* The partitions every member may own: input 0..in_parts-1, then the
 * repartition topic's. */
static rd_kafka_topic_partition_list_t *all_parts(const run_t *r)
{
    int n = r->in_parts + r->rep_parts;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(n > 0 ? n : 1);
    for (int q = 0; q < r->in_parts; q++)
        rd_kafka_topic_partition_list_add(l, r->set->kafka.input_topics.v[0], q);
    for (int q = 0; q < r->rep_parts; q++) rd_kafka_topic_partition_list_add(l, r->rep_topic, q);
    return l;
}

/* The group as the announcements and the group's commits show it. */
typedef struct view_s {
    bool read;         /* the announcements were read */
    int on_members;    /* partitions announced by another member running or configured on */
    int auto_members;  /* partitions announced by another member running auto */
    int switching;     /* partitions announced by another member running on, configured auto */
    int unannounced;   /* partitions committed by a member that does not announce (legacy) */
    int held;          /* input partitions nobody announces and not this member's: held by a
                          member that does not announce (or in a rebalance) */
    bool on_snapshots; /* a repartition partition holds an `on` engine's snapshot reference */
    bool recent_auto;  /* another member configured auto announced in the last RECENT_MS */
    char other_version[32];
} view_t;

static bool mine(const run_t *r, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < r->nparts; i++)
        if (r->parts[i] && r->parts[i]->partition == partition &&
            !strcmp(r->parts[i]->topic, topic))
            return true;
    return false;
}

/* Ask for both groups' commits (announcements, then the group's own),
 * unless a reading is in flight. */
static void read_ask(run_t *r)
{
    if (r->mem_wait || r->in_parts + r->rep_parts <= 0) return;
    char gid[400], es[256];
    snprintf(gid, sizeof(gid), "%s.members", r->set->kafka.group_id);
    const char *groups[2] = {gid, r->set->kafka.group_id};
    rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(
        r->members, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS);
    rd_kafka_AdminOptions_set_request_timeout(o, READ_TIMEOUT_MS, es, sizeof(es));
    rd_kafka_topic_partition_list_t *l = all_parts(r);
    for (int g = 0; g < 2; g++) {
        rd_kafka_ListConsumerGroupOffsets_t *req = rd_kafka_ListConsumerGroupOffsets_new(groups[g],
                                                                                         l);
        rd_kafka_ListConsumerGroupOffsets(r->members, &req, 1, o, r->mem_q);
        rd_kafka_ListConsumerGroupOffsets_destroy(req);
    }
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_AdminOptions_destroy(o);
    r->mem_wait = 2;
    r->mem_fail = false;
}

/* The results of the reading in flight, as they come, waiting up to
 * @p timeout_ms. @returns whether both are in (mem_got, or mem_fail). */
static bool read_take(run_t *r, int timeout_ms)
{
    int64_t t0 = sw_clock_ms();
    while (r->mem_wait > 0) {
        int64_t left = timeout_ms - (sw_clock_ms() - t0);
        rd_kafka_event_t *ev = rd_kafka_queue_poll(r->mem_q, left > 0 ? (int)left : 0);
        if (!ev) return false;
        const rd_kafka_ListConsumerGroupOffsets_result_t *res =
            rd_kafka_event_ListConsumerGroupOffsets_result(ev);
        if (res) {
            r->mem_wait--;
            size_t n = 0;
            const rd_kafka_group_result_t **g = rd_kafka_ListConsumerGroupOffsets_result_groups(res,
                                                                                                &n);
            const rd_kafka_topic_partition_list_t *pl = n == 1
                                                            ? rd_kafka_group_result_partitions(g[0])
                                                            : NULL;
            if (rd_kafka_event_error(ev) || n != 1 || rd_kafka_group_result_error(g[0]) || !pl) {
                r->mem_fail = true;
            } else {
                int which = strcmp(rd_kafka_group_result_name(g[0]), r->set->kafka.group_id) ? 0
                                                                                             : 1;
                if (r->mem_got[which]) rd_kafka_topic_partition_list_destroy(r->mem_got[which]);
                r->mem_got[which] = rd_kafka_topic_partition_list_copy(pl);
            }
        }
        rd_kafka_event_destroy(ev);
    }
    return true;
}

static void read_forget(run_t *r)
{
    for (int g = 0; g < 2; g++) {
        if (r->mem_got[g]) rd_kafka_topic_partition_list_destroy(r->mem_got[g]);
        r->mem_got[g] = NULL;
    }
}

/* Partition @p t's place in all_parts() (-1: none of them). */
static int slot(const run_t *r, const rd_kafka_topic_partition_t *t)
{
    if (!strcmp(t->topic, r->set->kafka.input_topics.v[0]))
        return t->partition >= 0 && t->partition < r->in_parts ? t->partition : -1;
    if (r->rep_topic && !strcmp(t->topic, r->rep_topic))
        return t->partition >= 0 && t->partition < r->rep_parts ? r->in_parts + t->partition : -1;
    return -1;
}

/* The group as the reading just taken shows it (then forgotten). */
static void look(run_t *r, view_t *v)
{
    memset(v, 0, sizeof(*v));
    int n = r->in_parts + r->rep_parts;
    const rd_kafka_topic_partition_list_t *a = r->mem_got[0], *c = r->mem_got[1];
    if (n <= 0 || r->mem_fail || !a || !c) {
        read_forget(r);
        return;
    }
    int64_t now = wall_ms();
    bool *fresh = sw_calloc((size_t)n, sizeof(bool));
    bool *ever = sw_calloc((size_t)n, sizeof(bool)); /* announced, however long ago */
    v->read = true;
    for (int k = 0; k < a->cnt; k++) {
        ann_t x;
        const rd_kafka_topic_partition_t *t = &a->elems[k];
        int i = slot(r, t);
        if (i < 0 || t->err || !parse_ann(t->metadata, t->metadata_size, &x)) continue;
        ever[i] = true;
        if (x.id != r->member_id && x.pref == 2 && now - t->offset <= RECENT_MS)
            v->recent_auto = true;
        x.fresh = now - t->offset <= FRESH_MS && t->offset - now <= FRESH_MS;
        if (!x.fresh) continue;
        fresh[i] = true;
        if (x.id == r->member_id) continue;
        if (strcmp(x.version, SW_VERSION))
            snprintf(v->other_version, sizeof(v->other_version), "%s", x.version);
        if (x.pref == 1 || (x.eff == 1 && x.pref != 2)) v->on_members++;
        else if (x.eff == 1) v->switching++;
        else if (x.eff == 2) v->auto_members++;
    }
    /* Every input partition has an owner once the group is stable, and
     * every member of this release announces what it owns: a partition
     * that no announcement names is held by a member that does not
     * announce, whether or not its commits move (an idle one). One never
     * announced at all counts at once; one a member of this release
     * announced (and left: a restart, a switch) after HELD_MS. */
    int64_t mono = sw_clock_ms();
    for (int q = 0; q < r->in_parts; q++) {
        bool rq = q < r->rep_parts;
        if (fresh[q] || (rq && fresh[r->in_parts + q]) ||
            mine(r, r->set->kafka.input_topics.v[0], q)) {
            r->mem_gone[q] = 0;
            continue;
        }
        if (!r->mem_gone[q]) r->mem_gone[q] = mono;
        if (!(ever[q] || (rq && ever[r->in_parts + q])) || mono - r->mem_gone[q] >= HELD_MS)
            v->held++;
    }
    for (int k = 0; k < c->cnt; k++) {
        const rd_kafka_topic_partition_t *t = &c->elems[k];
        int i = slot(r, t);
        if (i < 0 || t->err || t->offset < 0) continue;
        bool rep = i >= r->in_parts;
        /* An `on` engine's snapshot of a partition no member of this
         * release ever announced: an earlier release wrote it. */
        if (rep && t->metadata_size >= 4 && !memcmp(t->metadata, "sw1:", 4) && !ever[i] &&
            !(i - r->in_parts < r->in_parts && ever[i - r->in_parts]))
            v->on_snapshots = true;
        int64_t was = r->mem_off[i];
        r->mem_off[i] = t->offset;
        if (was == INT64_MIN || was == t->offset) continue;
        /* Moved: by whom? A partition announced (input p or
         * repartition p: under auto the owner of input p commits
         * both) or this member's is accounted for. */
        int q = rep ? i - r->in_parts : i;
        bool announced = fresh[q] ||
                         (q < r->rep_parts && r->in_parts + q < n && fresh[r->in_parts + q]);
        if (!announced && !mine(r, t->topic, t->partition)) v->unannounced++;
    }
    free(fresh);
    free(ever);
    read_forget(r);
}

/* This member's announcement of every partition it owns (asynchronous),
 * dated @p at (wall ms). */
static void announce_at(run_t *r, int64_t at, rd_kafka_queue_t *q)
{
    char md[160];
    int len = snprintf(md, sizeof(md), PREFIX "%016" PRIx64 ":%s:%s:%s", r->member_id, SW_VERSION,
                       mode_name(r->mode_pref),
                       r->rep_auto    ? "auto"
                       : r->rep_topic ? "on"
                                      : "off");
    if (len <= 0 || (size_t)len >= sizeof(md)) return;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(
        r->nparts ? (int)r->nparts : 1);
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p) continue;
        rd_kafka_topic_partition_t *t = rd_kafka_topic_partition_list_add(l, p->topic,
                                                                          p->partition);
        t->offset = at;
        t->metadata = sw_malloc((size_t)len);
        memcpy(t->metadata, md, (size_t)len);
        t->metadata_size = (size_t)len;
    }
    if (l->cnt) {
        if (q) rd_kafka_commit_queue(r->members, l, q, NULL, NULL);
        else rd_kafka_commit(r->members, l, 1);
    }
    rd_kafka_topic_partition_list_destroy(l);
}

void sw_run_members_leave(run_t *r)
{
    if (!r->members) return;
    /* Dated long ago: the others see this member gone at once, not
     * FRESH_MS later (a follower switching waits for no one). */
    rd_kafka_queue_t *q = rd_kafka_queue_new(r->members);
    announce_at(r, 1, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 1000);
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
}

static bool make_handle(run_t *r)
{
    char err[512], gid[400];
    snprintf(gid, sizeof(gid), "%s.members", r->set->kafka.group_id);
    rd_kafka_conf_t *c = sw_kafka_conf(r->opts->conf, SW_KAFKA_CONSUMER, r->opts->bootstrap, gid,
                                       &r->kctx, err, sizeof(err));
    if (c) sw_kafka_set(c, "enable.auto.commit", "false", err, sizeof(err));
    r->members = c ? rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof(err)) : NULL;
    if (!r->members) {
        if (c) rd_kafka_conf_destroy(c);
        sw_log(r->log, SW_LOG_WARN,
               "cannot create the group's announcement client (%s): this member does not "
               "announce its version and mode, and runs as configured",
               err);
        return false;
    }
    r->mem_q = rd_kafka_queue_new(r->members);
    r->mem_wait = 0;
    r->mem_off = sw_malloc(((size_t)(r->in_parts + r->rep_parts) + 1) * sizeof(int64_t));
    for (int i = 0; i < r->in_parts + r->rep_parts; i++) r->mem_off[i] = INT64_MIN;
    r->mem_gone = sw_calloc((size_t)r->in_parts + 1, sizeof(int64_t));
    return true;
}

static void follow(run_t *r, const char *why)
{
    r->rep_auto = false;
    r->mode_follow = true;
    r->mem_on_ms = sw_clock_ms();
    sw_run_m_set(r, SW_M_REPARTITION_FOLLOWING, 1);
    sw_log(r->log, SW_LOG_WARN,
           "repartition=auto runs as repartition=on: %s; it switches to auto by itself %d s "
           "after the last such member is gone (docs/operating.md, Upgrades)",
           why, SETTLE_MS / 1000);
}

void sw_run_members_start(run_t *r, int as)
{
    r->mode_next = -1;
    r->mode_pref = r->set->delivery.repartition_mode == SW_REPARTITION_AUTO ? 2
                   : r->rep_topic                                           ? 1
                                                                            : 0;
    sw_run_m_set(r, SW_M_REPARTITION_FOLLOWING, 0);
    if (!r->rep_topic || r->in_parts <= 0 || !make_handle(r)) return;
    r->mem_t0 = sw_clock_ms();
    if (!r->rep_auto) return; /* on (or auto that cannot run here) follows nobody */
    if (as == 1) {
        follow(r, "a member of the group runs on (it was seen before this restart)");
        return;
    }
    int64_t t0 = sw_clock_ms();
    bool said = false;
    while (*r->opts->running) {
        view_t v;
        read_ask(r);
        if (!read_take(r, 1000)) { /* in flight: asked again once it ends */
            if (sw_clock_ms() - t0 < WAIT_MAX_MS) continue;
            follow(r, "the group's announcements could not be read (on is always right)");
            return;
        }
        look(r, &v);
        if (!v.read) { /* decided on what the group says, never on silence */
            if (sw_clock_ms() - t0 < WAIT_MAX_MS) continue;
            follow(r, "the group's announcements could not be read (on is always right)");
            return;
        }
        char why[200];
        if (v.on_members) {
            snprintf(why, sizeof(why), "a member of group %s runs repartition=on%s%s",
                     r->set->kafka.group_id, v.other_version[0] ? " (version " : "",
                     v.other_version[0] ? v.other_version : "");
            if (v.other_version[0]) strncat(why, ")", sizeof(why) - strlen(why) - 1);
            follow(r, why);
            return;
        }
        if (v.switching && sw_clock_ms() - t0 >= WAIT_MAX_MS) {
            follow(r, "members of the group still run on after 40 s");
            return;
        }
        /* At a first start, followers waiting for members of an earlier
         * release that still hold partitions (sw_run_members_tick): not a
         * switch under way (a start as auto after following waits for
         * its peers' switch as above). */
        if (as < 0 && v.switching && v.held) {
            snprintf(why, sizeof(why),
                     "%d input partitions of group %s are held by members that do not announce "
                     "themselves (an earlier release), which the group's other members follow",
                     v.held, r->set->kafka.group_id);
            follow(r, why);
            return;
        }
        /* Members following on (configured auto): they switch within
         * seconds of each other; this one waits for them rather than
         * follow (which would send them back to on). */
        if (!v.switching) {
            if (as < 0 && v.on_snapshots && !v.auto_members && !v.recent_auto) {
                snprintf(why, sizeof(why),
                         "group %s's repartition partitions hold repartition=on snapshots and "
                         "no member announces auto (members of an earlier release run on)",
                         r->set->kafka.group_id);
                follow(r, why);
                return;
            }
            if (said) sw_log(r->log, SW_LOG_INFO, "the group's members run auto: starting as auto");
            return;
        }
        if (!said)
            sw_log(r->log, SW_LOG_INFO,
                   "waiting for the group's other members to switch from on to auto (%d "
                   "partitions still announced as on)",
                   v.switching);
        said = true;
        for (int i = 0; i < 5 && *r->opts->running; i++) {
            struct timespec ts = {0, 50 * 1000000};
            nanosleep(&ts, NULL);
        }
    }
}

void sw_run_members_tick(run_t *r, int64_t now)
{
    if (!r->members) return;
    /* At once when what this member owns changed (a peer starting now
     * sees it), else once a second; the group read once a second too,
     * its results taken when they are in (never waited for). */
    size_t owned = 0;
    for (size_t i = 0; i < r->nparts; i++) owned += r->parts[i] != NULL;
    if (now - r->mem_poll >= ANNOUNCE_MS || owned != r->mem_owned) {
        r->mem_owned = owned;
        bool due = now - r->mem_poll >= ANNOUNCE_MS;
        rd_kafka_poll(r->members, 0);
        announce_at(r, wall_ms(), NULL);
        if (due) {
            r->mem_poll = now;
            if (r->mode_pref == 2) read_ask(r);
        }
    }
    if (r->mode_pref != 2 || !r->mem_wait || !read_take(r, 0)) return;
    view_t v;
    look(r, &v);
    if (!v.read) return; /* nothing known: nothing changes */
    bool on = v.on_members || v.unannounced || (!r->mode_follow && v.switching);
    /* A follower also waits while input partitions are held by members
     * that do not announce (an earlier release running on, idle or not):
     * it switches to auto only once every partition is announced. A
     * member running auto does not go back to on for them alone (a
     * rebalance leaves partitions unowned for a moment): an earlier
     * release's member is seen by its commits, as above. */
    bool held = r->mode_follow && v.held > 0;
    if (held && !r->mem_held)
        sw_log(r->log, SW_LOG_INFO,
               "%d input partitions of group %s are held by members that do not announce "
               "themselves (an earlier release, which runs on): this member runs on until every "
               "partition is held by a member of this release",
               v.held, r->set->kafka.group_id);
    r->mem_held = r->mode_follow ? v.held : 0;
    if (on || held) r->mem_on_ms = now;
    /* Not before this consumer's first assignment: librdkafka < 2.3.0's
     * cooperative-sticky assignor aborts when a member that joined leaves
     * before it was assigned (upstream issue 4312; CI saw the leader abort
     * in rdkafka_sticky_assignor.c when a member started as auto saw `on`
     * within 2 s of its start and restarted). Unassigned, it analyses
     * nothing, so following later loses nothing. */
    if (!r->mode_follow && on && !r->assigned_once) return;
    if (!r->mode_follow && on) {
        sw_log(r->log, SW_LOG_WARN,
               "a member of group %s runs repartition=on (%d partitions announced on, %d "
               "committed by a member that does not announce, an earlier release): this member "
               "stops and starts again as on, so that no job is analysed twice",
               r->set->kafka.group_id, v.on_members + v.switching, v.unannounced);
        r->mode_next = 1;
    } else if (r->mode_follow && !on && now - r->mem_on_ms >= SETTLE_MS) {
        sw_log(r->log, SW_LOG_INFO,
               "no member of group %s has run repartition=on for %d s: switching to auto (a "
               "graceful stop, then a start as auto from the snapshots)",
               r->set->kafka.group_id, SETTLE_MS / 1000);
        r->mode_next = 2;
    }
}

void sw_run_members_stop(run_t *r)
{
    read_forget(r);
    if (r->mem_q) rd_kafka_queue_destroy(r->mem_q);
    r->mem_q = NULL;
    r->mem_wait = 0;
    if (r->members) rd_kafka_destroy_flags(r->members, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    r->members = NULL;
    free(r->mem_off);
    r->mem_off = NULL;
    free(r->mem_gone);
    r->mem_gone = NULL;
}
