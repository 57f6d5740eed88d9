/*
 * Incident report (see sw_report.h): alert records are validated and kept
 * per job and episode as plain structs; rendering writes one HTML page with
 * inline CSS and one inline SVG chart per episode. Every string that came
 * from the input goes through sw_report_escape(). No I/O, no clock: times
 * shown are the records' own timestamps.
 */
#include "sw_report_int.h"

#include "sw_codec_pager.h"

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1d1d1f;"
    "background:#f5f6f8;margin:0}"
    "main{max-width:1040px;margin:0 auto;padding:16px 24px 48px}"
    "h1{font-size:24px;margin:16px 0 4px}h2{font-size:20px;margin:32px 0 8px;border-bottom:2px solid #d0d4da;"
    "padding-bottom:4px}h3{font-size:16px;margin:20px 0 6px}h4{font-size:14px;margin:14px 0 4px}"
    "code{font:12.5px ui-monospace,Menlo,Consolas,monospace;background:#eceef1;padding:1px 4px;"
    "border-radius:3px;overflow-wrap:anywhere}"
    "section.episode,section.summary{background:#fff;border:1px solid #d9dde3;border-radius:6px;"
    "padding:4px 18px 14px;margin:14px 0;border-left:6px solid #8a94a3}"
    "section.sev-critical{border-left-color:#c62828}section.sev-error{border-left-color:#ef6c00}"
    "section.sev-warning{border-left-color:#f9a825}section.sev-info{border-left-color:#1565c0}"
    ".badge{display:inline-block;font-size:12px;font-weight:600;padding:1px 8px;border-radius:10px;"
    "color:#fff;background:#6b7480;vertical-align:middle}"
    ".badge.critical{background:#c62828}.badge.error{background:#ef6c00}"
    ".badge.warning{background:#b58900}.badge.info{background:#1565c0}"
    ".summary-line{font-weight:600;margin:6px 0}.muted{color:#6b7480}"
    "table{border-collapse:collapse;margin:6px 0 10px;width:100%}"
    "th,td{border:1px solid #dde1e6;padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:#f0f2f5;font-weight:600}td.num{text-align:right;white-space:nowrap}"
    "tr.charted td{background:#fff8e1}"
    "dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0}"
    "dl.facts dt{color:#6b7480}dl.facts dd{margin:0}"
    "p.choice{background:#f0f4fa;border:1px solid #d5deeb;border-radius:4px;padding:6px 10px}"
    "figure.chart{margin:8px 0}svg.chart{max-width:100%;height:auto;display:block}"
    "figcaption{color:#4a5260;font-size:12.5px;margin-top:4px}"
    "svg text{font:12px system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;fill:#333}"
    "svg .axis-title{font-size:12.5px;fill:#555}svg .spike-label{font-weight:700}"
    "svg .onset-label{font-weight:700;fill:#111}"
    "svg rect.bg{fill:#fff}svg rect.frame{fill:none;stroke:#9aa3ad}"
    "svg line.grid{stroke:#e6e9ed}svg line.tick{stroke:#9aa3ad}"
    "svg path.series{fill:none;stroke-width:1.8;stroke-linejoin:round}"
    "svg path.rise{fill:none;stroke-width:6;stroke-opacity:.35;stroke-linecap:round}"
    "svg line.onset{stroke:#111;stroke-width:1.6;stroke-dasharray:6 4}"
    "svg line.stem{stroke-width:2}svg line.dashed{stroke-dasharray:3 3}"
    "svg line.swatch{stroke-width:2.5}svg circle{stroke:#fff;stroke-width:1.5}"
    "ul.notes{margin:4px 0;padding-left:20px}"
    "nav table td,nav table th{font-size:13px}"
    "footer{color:#6b7480;font-size:12px;margin-top:32px}"
    "svg path.used{fill:none;stroke:#d84315;stroke-width:2}"
    "svg path.total{fill:none;stroke:#1d1d1f;stroke-width:1.4;stroke-dasharray:7 4}"
    "svg line.swatch.used{stroke:#d84315}svg line.swatch.total{stroke:#1d1d1f;stroke-dasharray:7 4}"
    "svg line.warn{stroke:#b58900;stroke-width:1.6;stroke-dasharray:5 3}"
    "svg circle.warn{fill:#b58900}svg .warn-label{fill:#8a6d00;font-weight:700}"
    "svg line.death{stroke:#c62828;stroke-width:2}svg .death-label{fill:#c62828;font-weight:700}"
    "svg path.other-death{fill:#c62828;stroke:#c62828}"
    "svg path.other-death.silent{fill:#fff;stroke-width:1.5}"
    "svg .death-small{font-size:11px;fill:#c62828}"
    "svg line.watchdog{stroke:#6b7480;stroke-width:1.2}svg .wd-label{fill:#4a5260}"
    "div.rankmap{display:flex;flex-wrap:wrap;gap:3px;margin:8px 0 4px;max-width:760px}"
    "span.rk{display:inline-block;min-width:19px;height:19px;font-size:10px;line-height:19px;"
    "text-align:center;border-radius:2px;color:#1d1d1f;vertical-align:middle}"
    "div.rankmap.small span.rk{min-width:9px;height:9px}"
    "span.rk.first{background:#7f0000;color:#fff}span.rk.dead{background:#e53935;color:#fff}"
    "span.rk.blind{background:#b0b6be}span.rk.alive{background:#a5d6a7}"
    "p.rk-legend{font-size:12.5px;color:#4a5260;margin:2px 0 8px}"
    "p.rk-legend span.rk{min-width:12px;height:12px;margin-left:10px}"
    "tr.repeat td{background:#fff3f0}table.fleet td:first-child{white-space:nowrap}section.fleet{background:#fff;border:1px solid #d9dde3;"
    "border-radius:6px;padding:4px 18px 14px;margin:14px 0;border-left:6px solid #c62828}";

static void put_source(sw_buf_t *out, const rec_t *r)
{
    if (!r->has_source) return;
    sw_buf_puts(out, "<dt>source</dt><dd>topic <code>");
    sw_report_esc(out, r->source_topic);
    sw_buf_printf(out, "</code> [%" PRId64 "] offset %" PRId64 "</dd>", r->source_partition,
                  r->source_offset);
}

static void put_notes(sw_buf_t *out, const rec_t *r)
{
    if (r->n_notes == 0) {
        sw_buf_puts(out, "<p class=\"muted\">No notes.</p>\n");
        return;
    }
    sw_buf_puts(out, "<ul class=\"notes\">");
    for (size_t i = 0; i < r->n_notes; i++) {
        sw_buf_puts(out, "<li>");
        sw_report_esc(out, r->notes[i]);
        sw_buf_puts(out, "</li>");
    }
    sw_buf_puts(out, "</ul>\n");
}

static void put_suspects(sw_buf_t *out, const rec_t *r)
{
    if (r->n_sus == 0) {
        sw_buf_puts(out, "<p class=\"muted\">No suspects.</p>\n");
        return;
    }
    sw_buf_puts(out,
                "<table class=\"suspects\"><thead><tr><th>rank</th><th>runs on</th>"
                "<th>lead over onset</th>"
                "<th>spike (aligned, from onset)</th><th>peak delta</th><th>rising samples</th>"
                "<th>confidence</th><th>phase</th><th>timeline</th></tr></thead><tbody>");
    for (size_t i = 0; i < r->n_sus; i++) {
        const susp_t *s = &r->sus[i];
        sw_buf_printf(out, "<tr><td class=\"num\">%" PRId64 "</td><td>", s->rank);
        if (s->host.len) {
            sw_report_esc(out, s->host);
            if (s->device_id >= 0) sw_buf_printf(out, " GPU %" PRId64, s->device_id);
        } else {
            sw_buf_puts(out, "?");
        }
        sw_buf_puts(out, "</td><td class=\"num\">");
        if (!s->has_lead) sw_buf_puts(out, "?");
        else if (s->lead_ns == 0) sw_buf_puts(out, "0 (at onset)");
        else sw_report_duration(out, s->lead_ns);
        sw_buf_puts(out, "</td><td class=\"num\">");
        if (s->has_aligned && r->has_onset)
            sw_report_put_rel(out, sw_report_rel_ns(s->aligned_ns, r->onset_ns));
        else if (s->has_aligned) sw_buf_printf(out, "%" PRId64 " ns", s->aligned_ns);
        else sw_buf_puts(out, "?");
        sw_buf_puts(out, "</td><td class=\"num\">");
        if (s->has_delta) {
            sw_buf_puts(out, "+");
            sw_report_bytes(out, s->peak_delta_bytes);
        } else {
            sw_buf_puts(out, "?");
        }
        sw_buf_puts(out, "</td><td class=\"num\">");
        if (s->spike_samples >= 0) sw_buf_put_i64(out, s->spike_samples);
        else sw_buf_puts(out, "?");
        sw_buf_puts(out, "</td><td>");
        if (s->confidence.len) sw_report_esc(out, s->confidence);
        else sw_buf_puts(out, "unknown");
        sw_buf_puts(out, "</td><td>");
        sw_report_put_phase(out, s);
        sw_buf_puts(out, "</td><td>");
        if (s->n_tl) sw_buf_printf(out, "%zu points", s->n_tl);
        else if (s->tl_problem.len) {
            sw_buf_puts(out, "not drawn: ");
            sw_report_esc(out, s->tl_problem);
        } else sw_buf_puts(out, "no timeline in record");
        sw_buf_puts(out, "</td></tr>");
    }
    sw_buf_puts(out, "</tbody></table>\n");
}

static int cmp_rec(const void *pa, const void *pb)
{
    const rec_t *a = *(rec_t *const *)pa, *b = *(rec_t *const *)pb;
    if (a->revision != b->revision) return a->revision < b->revision ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static const rec_t *first_of(const ep_t *ep, act_t act)
{
    for (size_t i = 0; i < ep->n; i++)
        if (ep->recs[i]->act == act) return ep->recs[i];
    return NULL;
}

static void put_lifecycle(sw_buf_t *out, const ep_t *ep, const rec_t *chart)
{
    rec_t **recs = sw_malloc((ep->n ? ep->n : 1) * sizeof(*recs));
    memcpy(recs, ep->recs, ep->n * sizeof(*recs));
    qsort(recs, ep->n, sizeof(*recs), cmp_rec);
    const rec_t *trig = first_of(ep, ACT_TRIGGER);
    sw_buf_puts(out,
                "<table class=\"lifecycle\"><thead><tr><th>record</th><th>revision</th>"
                "<th>event time (UTC)</th><th>since trigger</th><th>onset vs charted</th>"
                "<th>suspects</th><th>severity</th><th>summary</th></tr></thead><tbody>");
    for (size_t i = 0; i < ep->n; i++) {
        const rec_t *r = recs[i];
        sw_buf_printf(out, "<tr class=\"%s%s\"><td>%s%s</td><td class=\"num\">%" PRId64 "</td><td>",
                      sw_action_str((sw_action_t)r->act), r == chart ? " charted" : "",
                      sw_action_str((sw_action_t)r->act),
                      r == chart ? " <span class=\"muted\">(charted)</span>" : "", r->revision);
        if (r->has_event) sw_report_put_utc(out, r->event_ns);
        else sw_buf_puts(out, "\xE2\x80\x94");
        sw_buf_puts(out, "</td><td class=\"num\">");
        if (trig && trig->has_event && r->has_event)
            sw_report_put_rel(out, sw_report_rel_ns(r->event_ns, trig->event_ns));
        else sw_buf_puts(out, "\xE2\x80\x94");
        sw_buf_puts(out, "</td><td>");
        if (!r->has_onset) sw_buf_puts(out, "none");
        else if (chart && chart->has_onset && r->onset_ns != chart->onset_ns)
            sw_report_put_rel(out, sw_report_rel_ns(r->onset_ns, chart->onset_ns));
        else sw_buf_puts(out, "as charted");
        sw_buf_puts(out, "</td><td>");
        for (size_t k = 0; k < r->n_sus && k < 8; k++) {
            if (k) sw_buf_puts(out, ", ");
            sw_buf_printf(out, "%" PRId64, r->sus[k].rank);
            if (r->sus[k].confidence.len) {
                sw_buf_puts(out, " (");
                sw_report_esc(out, r->sus[k].confidence);
                sw_buf_puts(out, ")");
            }
        }
        if (r->n_sus > 8) sw_buf_printf(out, " and %zu more", r->n_sus - 8);
        if (r->n_sus == 0) sw_buf_puts(out, "none");
        sw_buf_printf(out, "</td><td><span class=\"badge %s\">",
                      sw_report_sev_class(sw_report_sev_of(r)));
        sw_report_esc(out, sw_report_sev_of(r));
        sw_buf_puts(out, "</span></td><td>");
        sw_report_esc(out, r->summary);
        sw_buf_puts(out, "</td></tr>");
    }
    sw_buf_puts(out, "</tbody></table>\n");
    if (ep->dups)
        sw_buf_printf(out,
                      "<p class=\"muted\">%" PRIu64
                      " repeated record%s of this episode "
                      "(same action and revision, as at-least-once delivery gives) ignored.</p>\n",
                      ep->dups, ep->dups == 1 ? "" : "s");
    free(recs);
}

static void put_choice(sw_buf_t *out, const ep_t *ep, const rec_t *chart)
{
    const rec_t *resolve = first_of(ep, ACT_RESOLVE);
    sw_buf_puts(out, "<p class=\"choice\">");
    if (!chart) {
        sw_buf_puts(out,
                    "This episode has no trigger or update record in the input (only its "
                    "resolve), so there is no onset or suspect list to chart.");
    } else {
        sw_buf_printf(out, "Charted from the <strong>%s</strong> record, revision %" PRId64,
                      sw_action_str((sw_action_t)chart->act), chart->revision);
        if (chart->has_event) {
            sw_buf_puts(out, " (event at ");
            sw_report_put_utc(out, chart->event_ns);
            sw_buf_puts(out, ")");
        }
        sw_buf_puts(out,
                    ": the latest trigger/update of this episode, which carries its final "
                    "cluster onset and suspects. ");
        if (resolve) {
            sw_buf_printf(out, "The episode resolved (revision %" PRId64, resolve->revision);
            if (resolve->has_event) {
                sw_buf_puts(out, ", event at ");
                sw_report_put_utc(out, resolve->event_ns);
            }
            sw_buf_puts(out, ") keeping this verdict");
            if (resolve->resolve_reason.len &&
                !strcmp(resolve->resolve_reason.ptr, "suspect_lost")) {
                sw_buf_puts(out, ": the spike of ");
                if (resolve->resolve_lost_rank >= 0)
                    sw_buf_printf(out, "rank %" PRId64, resolve->resolve_lost_rank);
                else sw_buf_puts(out, "a suspect");
                sw_buf_puts(out, " left its window (aged out or went stale).");
            } else if (resolve->resolve_reason.len &&
                       !strcmp(resolve->resolve_reason.ptr, "onset_gone")) {
                sw_buf_puts(out, ": fewer than two ranks still showed a spike.");
            } else if (resolve->resolve_reason.len &&
                       !strcmp(resolve->resolve_reason.ptr, "next_storm")) {
                sw_buf_puts(out,
                            ": a rank's memory rose again clearly after this storm, the start "
                            "of the next one (the next episode).");
            } else {
                sw_buf_puts(out, ".");
            }
        } else
            sw_buf_puts(out,
                        "No resolve record: the episode was still open at the end of the input.");
    }
    sw_buf_puts(out, "</p>\n");
}

static void put_facts(sw_buf_t *out, const rec_t *r, const ep_t *ep)
{
    sw_buf_puts(out, "<dl class=\"facts\">");
    sw_buf_printf(out, "<dt>severity</dt><dd><span class=\"badge %s\">",
                  sw_report_sev_class(sw_report_sev_of(r)));
    sw_report_esc(out, sw_report_sev_of(r));
    sw_buf_puts(out, "</span></dd><dt>dedup_key</dt><dd>");
    if (r->dedup_key.len) {
        sw_buf_puts(out, "<code>");
        sw_report_esc(out, r->dedup_key);
        sw_buf_puts(out, "</code>");
    } else {
        sw_buf_puts(out, "none");
    }
    sw_buf_puts(out, "</dd>");
    if (ep) {
        sw_buf_puts(out, "<dt>state</dt><dd>");
        sw_buf_puts(out, first_of(ep, ACT_RESOLVE) ? "resolved" : "open at the end of the input");
        sw_buf_puts(out, "</dd>");
    }
    sw_buf_puts(out, "<dt>cluster onset</dt><dd>");
    if (r->has_onset) {
        sw_report_put_utc(out, r->onset_ns);
        sw_buf_printf(out, " <span class=\"muted\">(%" PRId64 " ns, aligned)</span>", r->onset_ns);
    } else {
        sw_buf_puts(out, "none");
    }
    sw_buf_puts(out, "</dd>");
    if (r->world_size >= 0)
        sw_buf_printf(out, "<dt>world size</dt><dd>%" PRId64 "</dd>", r->world_size);
    if (r->n_participating >= 0)
        sw_buf_printf(out, "<dt>participating ranks</dt><dd>%" PRId64 "</dd>", r->n_participating);
    sw_buf_puts(out, "<dt>missing ranks</dt><dd>");
    sw_report_put_ranks(out, r->missing, r->n_missing, 32);
    sw_buf_puts(out, "</dd>");
    if (r->n_counts)
        sw_buf_printf(out,
                      "<dt>samples per rank</dt><dd>%" PRId64 " to %" PRId64
                      " over %zu rank%s "
                      "(%" PRId64 " in all)</dd>",
                      r->counts_min, r->counts_max, r->n_counts, r->n_counts == 1 ? "" : "s",
                      r->counts_sum);
    if (r->has_offset) {
        sw_buf_puts(out, "<dt>largest clock offset</dt><dd>");
        sw_report_duration(out, r->offset_max_abs_ns);
        sw_buf_puts(out, " (rank ");
        sw_report_esc(out, r->offset_max_rank);
        sw_buf_puts(out, ")</dd>");
    }
    put_source(out, r);
    sw_buf_puts(out, "</dl>\n");
}

static void put_episode(sw_buf_t *out, const job_t *job, size_t j, const ep_t *ep,
                        unsigned *chart_no)
{
    const rec_t *chart = sw_report_ep_chart(ep);
    const rec_t *head = chart ? chart : ep->recs[0];
    sw_buf_printf(out, "<section class=\"episode sev-%s\" id=\"job-%zu-ep-%" PRId64 "\">\n",
                  sw_report_sev_class(sw_report_sev_of(head)), j + 1, ep->episode);
    sw_buf_printf(out, "<h3>Episode %" PRId64 " <span class=\"badge %s\">", ep->episode,
                  sw_report_sev_class(sw_report_sev_of(head)));
    sw_report_esc(out, sw_report_sev_of(head));
    sw_buf_puts(out, "</span></h3>\n<p class=\"summary-line\">");
    if (head->summary.len) sw_report_esc(out, head->summary);
    else sw_buf_puts(out, "(no summary line in the record)");
    sw_buf_puts(out, "</p>\n");
    put_choice(out, ep, chart);
    if (chart) {
        sw_report_put_chart(out, job, ep, chart, ++*chart_no);
        put_facts(out, chart, ep);
        sw_buf_puts(out, "<h4>Suspects</h4>\n");
        put_suspects(out, chart);
        sw_buf_puts(out, "<h4>Notes</h4>\n");
        put_notes(out, chart);
    } else {
        put_facts(out, head, ep);
    }
    sw_buf_puts(out, "<h4>Lifecycle</h4>\n");
    put_lifecycle(out, ep, chart);
    sw_buf_puts(out, "</section>\n");
}

static void put_summary(sw_buf_t *out, const rec_t *r, size_t j, size_t k)
{
    sw_buf_printf(out, "<section class=\"summary sev-%s\" id=\"job-%zu-summary-%zu\">\n",
                  sw_report_sev_class(sw_report_sev_of(r)), j + 1, k + 1);
    if (r->episode > 0)
        sw_buf_printf(
            out, "<h3>Job summary <span class=\"muted\">(after episode %" PRId64 ")</span></h3>\n",
            r->episode);
    else sw_buf_puts(out, "<h3>Job summary <span class=\"muted\">(no storm episode)</span></h3>\n");
    sw_buf_puts(out, "<p class=\"summary-line\">");
    if (r->summary.len) sw_report_esc(out, r->summary);
    else sw_buf_puts(out, "(no summary line in the record)");
    sw_buf_puts(out,
                "</p>\n<p class=\"muted\">The analysis over everything the job sent, at the "
                "end of its input or after it went idle; its suspects are tabled, the "
                "episodes above are charted.</p>\n");
    put_facts(out, r, NULL);
    sw_buf_puts(out, "<h4>Suspects</h4>\n");
    put_suspects(out, r);
    sw_buf_puts(out, "<h4>Notes</h4>\n");
    put_notes(out, r);
    sw_buf_puts(out, "</section>\n");
}

static int cmp_ep(const void *pa, const void *pb)
{
    const ep_t *a = *(ep_t *const *)pa, *b = *(ep_t *const *)pb;
    return a->episode < b->episode ? -1 : a->episode > b->episode;
}

/* A report without a storm episode opens with its crashes: one row per
 * crash, its final first death. @returns false when there is none. */
static bool put_crash_overview(sw_buf_t *out, const sw_report_t *rep)
{
    size_t n = 0;
    for (size_t j = 0; j < rep->n_jobs; j++)
        for (size_t i = 0; i < rep->jobs[j]->n_x8; i++)
            n += rep->jobs[j]->x8s[i].act == SW_ACTION_CRASH;
    if (!n) return false;
    sw_buf_puts(out,
                "<table><thead><tr><th>job</th><th>crash</th><th>died first</th><th>runs on</th>"
                "<th>cause</th><th>dead</th><th>blind</th></tr></thead><tbody>");
    for (size_t j = 0; j < rep->n_jobs; j++) {
        const job_t *job = rep->jobs[j];
        for (size_t i = 0; i < job->n_x8; i++) {
            const x8item_t *f = &job->x8s[i];
            if (f->act != SW_ACTION_CRASH || sw_report_crash_final(job, f->number) != f) continue;
            sw_buf_puts(out, "<tr><td>");
            sw_report_put_job_name(out, job);
            sw_buf_printf(out,
                          "</td><td><a href=\"#job-%zu-crash-%" PRId64 "\">%" PRId64
                          "</a></td><td class=\"num\">rank %" PRId64 "</td><td>",
                          j + 1, f->number, f->number, f->fd_rank);
            if (f->fd_host) {
                sw_report_escc(out, f->fd_host);
                if (f->fd_device >= 0) sw_buf_printf(out, " GPU %" PRId64, f->fd_device);
            } else {
                sw_buf_puts(out, "?");
            }
            sw_buf_printf(out,
                          "</td><td>%s</td><td class=\"num\">%" PRId64
                          "</td><td class=\"num\">%zu</td></tr>",
                          f->fd_silent ? "silent" : "oom", f->deaths, f->n_blind);
        }
    }
    sw_buf_puts(out,
                "</tbody></table>\n<p class=\"muted\">No storm episode (no trigger, update or "
                "resolve record): the crashes are what happened.</p></nav>\n");
    return true;
}

static void put_overview(sw_buf_t *out, const sw_report_t *rep, ep_t ***sorted)
{
    size_t n_crash = 0;
    for (size_t j = 0; j < rep->n_jobs; j++)
        for (size_t i = 0; i < rep->jobs[j]->n_x8; i++)
            n_crash += rep->jobs[j]->x8s[i].act == SW_ACTION_CRASH;
    sw_buf_puts(out, sw_report_episodes(rep) == 0 && n_crash ? "<nav><h2>Crashes</h2>\n"
                                                             : "<nav><h2>Episodes</h2>\n");
    size_t total = sw_report_episodes(rep);
    if (total == 0) {
        if (put_crash_overview(out, rep)) return;
        sw_buf_puts(out,
                    "<p>No trigger, update or resolve record in the input: no storm episode "
                    "to report.</p></nav>\n");
        return;
    }
    sw_buf_puts(out,
                "<table><thead><tr><th>job</th><th>episode</th><th>severity</th>"
                "<th>first suspect</th><th>lead</th><th>confidence</th><th>state</th>"
                "</tr></thead><tbody>");
    for (size_t j = 0; j < rep->n_jobs; j++) {
        const job_t *job = rep->jobs[j];
        for (size_t e = 0; e < job->n_eps; e++) {
            const ep_t *ep = sorted[j][e];
            const rec_t *chart = sw_report_ep_chart(ep);
            const rec_t *head = chart ? chart : ep->recs[0];
            sw_buf_puts(out, "<tr><td>");
            sw_report_put_job_name(out, job);
            sw_buf_printf(out, "</td><td><a href=\"#job-%zu-ep-%" PRId64 "\">%" PRId64 "</a></td>",
                          j + 1, ep->episode, ep->episode);
            sw_buf_printf(out, "<td><span class=\"badge %s\">",
                          sw_report_sev_class(sw_report_sev_of(head)));
            sw_report_esc(out, sw_report_sev_of(head));
            sw_buf_puts(out, "</span></td>");
            if (chart && chart->n_sus) {
                const susp_t *s = &chart->sus[0];
                sw_buf_printf(out, "<td class=\"num\">rank %" PRId64 "</td><td class=\"num\">",
                              s->rank);
                if (s->has_lead) sw_report_duration(out, s->lead_ns);
                else sw_buf_puts(out, "?");
                sw_buf_puts(out, "</td><td>");
                if (s->confidence.len) sw_report_esc(out, s->confidence);
                else sw_buf_puts(out, "unknown");
                sw_buf_puts(out, "</td>");
            } else {
                sw_buf_puts(out, "<td>\xE2\x80\x94</td><td>\xE2\x80\x94</td><td>\xE2\x80\x94</td>");
            }
            sw_buf_printf(out, "<td>%s</td></tr>",
                          first_of(ep, ACT_RESOLVE) ? "resolved" : "open at end of input");
        }
    }
    sw_buf_puts(out, "</tbody></table></nav>\n");
}

/* SPEC 8: the job's warnings and crashes in arrival order, each with its
 * event time, the first death or the ranks close to full, the dead and
 * blind ranks. */
static void put_x8(sw_buf_t *out, const job_t *job)
{
    if (!job->n_x8) return;
    sw_buf_puts(out,
                "<h3>Crash and warning timeline</h3>\n<table class=\"lifecycle\">\n"
                "<tr><th>event time (UTC)</th><th>record</th><th>what</th>"
                "<th>ranks</th></tr>\n");
    for (size_t i = 0; i < job->n_x8; i++) {
        const x8item_t *it = &job->x8s[i];
        sw_buf_puts(out, "<tr><td>");
        if (it->has_event) sw_buf_put_rfc3339(out, it->event_ns);
        sw_buf_printf(out, "</td><td>%s %lld%s rev %lld</td><td>",
                      it->act == SW_ACTION_CRASH ? "crash" : "warning", (long long)it->number,
                      it->act == SW_ACTION_WARNING && !it->open ? " (closed)" : "",
                      (long long)it->revision);
        sw_report_escc(out, it->summary);
        sw_buf_puts(out, "</td><td>");
        sw_report_escc(out, it->detail);
        sw_buf_puts(out, "</td></tr>\n");
    }
    sw_buf_puts(out, "</table>\n");
}

void sw_report_render(const sw_report_t *rep, const sw_report_opts_t *opts, sw_buf_t *out)
{
    sw_report_opts_t none = {NULL, NULL, 0, 0, false};
    if (!opts) opts = &none;
    const char *title = opts->title ? opts->title : "stormwatch incident report";
    /* episodes in episode order per job, without reordering the model */
    ep_t ***sorted = sw_calloc(rep->n_jobs ? rep->n_jobs : 1, sizeof(*sorted));
    size_t n_eps = 0, n_sums = 0, n_open = 0, n_crashes = 0, n_warnings = 0;
    for (size_t j = 0; j < rep->n_jobs; j++) {
        job_t *job = rep->jobs[j];
        sorted[j] = sw_malloc((job->n_eps ? job->n_eps : 1) * sizeof(**sorted));
        for (size_t e = 0; e < job->n_eps; e++) {
            sorted[j][e] = &job->eps[e];
            if (!first_of(&job->eps[e], ACT_RESOLVE)) n_open++;
        }
        qsort(sorted[j], job->n_eps, sizeof(**sorted), cmp_ep);
        n_eps += job->n_eps;
        n_sums += job->n_sums;
        for (size_t i = 0; i < job->n_x8; i++) {
            const x8item_t *it = &job->x8s[i];
            if (it->act == SW_ACTION_CRASH)
                n_crashes += sw_report_crash_final(job, it->number) == it;
            else if (it->revision == 0 && it->open) n_warnings++;
        }
    }
    sw_buf_puts(out,
                "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                "<title>");
    sw_report_escc(out, title);
    sw_buf_puts(out, "</title>\n<style>");
    sw_buf_puts(out, css);
    sw_buf_puts(out, "</style>\n</head>\n<body>\n<main>\n<header><h1>");
    sw_report_escc(out, title);
    sw_buf_puts(out, "</h1>\n<p>");
    sw_buf_printf(out, "%" PRIu64 " alert record%s", rep->records, rep->records == 1 ? "" : "s");
    if (opts->n_sources) {
        sw_buf_puts(out, " from ");
        for (size_t i = 0; i < opts->n_sources; i++) {
            if (i) sw_buf_puts(out, i + 1 == opts->n_sources ? " and " : ", ");
            sw_buf_puts(out, "<code>");
            sw_report_escc(out, opts->sources[i]);
            sw_buf_puts(out, "</code>");
        }
    }
    sw_buf_printf(out, ": %zu job%s, ", rep->n_jobs, rep->n_jobs == 1 ? "" : "s");
    if (n_crashes)
        sw_buf_printf(out, "%zu crash%s, %zu warning%s, ", n_crashes, n_crashes == 1 ? "" : "es",
                      n_warnings, n_warnings == 1 ? "" : "s");
    if (n_eps || !n_crashes)
        sw_buf_printf(out, "%zu storm episode%s (%zu open at the end of the input), ", n_eps,
                      n_eps == 1 ? "" : "s", n_open);
    else sw_buf_puts(out, "no storm episode, ");
    sw_buf_printf(out, "%zu job summar%s.", n_sums, n_sums == 1 ? "y" : "ies");
    if (rep->dups)
        sw_buf_printf(out, " %" PRIu64 " repeated record%s ignored.", rep->dups,
                      rep->dups == 1 ? "" : "s");
    if (opts->skipped_lines)
        sw_buf_printf(out,
                      " <strong>%" PRIu64
                      " invalid line%s skipped</strong> (see the "
                      "command's error output).",
                      opts->skipped_lines, opts->skipped_lines == 1 ? "" : "s");
    sw_buf_puts(out, "</p>\n");
    if (!opts->fleet_only && n_eps)
        sw_buf_puts(out,
                    "<p class=\"muted\">Each episode (one job, one episode number) is "
                    "charted from its latest trigger or update record: that record carries the "
                    "episode's verdict (cluster onset and suspects), which its resolve record "
                    "repeats when it says why the episode ended. Times "
                    "on the charts are aligned clocks relative to the cluster onset; memory is in "
                    "binary units (1 GiB = 2<sup>30</sup> bytes).</p>\n");
    sw_buf_puts(out, "</header>\n");
    bool fleet = false;
    if (opts->fleet_only || sw_report_fleet_jobs(rep) >= 2) fleet = sw_report_put_fleet(out, rep);
    if (opts->fleet_only && !fleet)
        sw_buf_puts(out,
                    "<section class=\"fleet\" id=\"fleet\"><h2>Repeat offenders</h2><p>No "
                    "storm episode or crash in the input names a host: nothing to group.</p>"
                    "</section>\n");
    if (!opts->fleet_only) put_overview(out, rep, sorted);
    unsigned chart_no = 0;
    for (size_t j = 0; j < rep->n_jobs && !opts->fleet_only; j++) {
        const job_t *job = rep->jobs[j];
        sw_buf_printf(out, "<section class=\"job\" id=\"job-%zu\">\n<h2>Job ", j + 1);
        sw_report_put_job_name(out, job);
        size_t jc = 0;
        for (size_t i = 0; i < job->n_x8; i++)
            jc += job->x8s[i].act == SW_ACTION_CRASH &&
                  sw_report_crash_final(job, job->x8s[i].number) == &job->x8s[i];
        sw_buf_printf(out, " <span class=\"muted\">%zu episode%s", job->n_eps,
                      job->n_eps == 1 ? "" : "s");
        if (jc) sw_buf_printf(out, ", %zu crash%s", jc, jc == 1 ? "" : "es");
        sw_buf_puts(out, "</span></h2>\n");
        if (job->n_eps == 0) {
            bool crashed = false;
            for (size_t i = 0; i < job->n_x8; i++) crashed |= job->x8s[i].act == SW_ACTION_CRASH;
            sw_buf_puts(out, crashed ? "<p class=\"muted\">No storm episode in the input for "
                                       "this job: it crashed without one.</p>\n"
                                     : "<p class=\"muted\">No storm episode in the input for "
                                       "this job.</p>\n");
        }
        for (size_t e = 0; e < job->n_eps; e++) put_episode(out, job, j, sorted[j][e], &chart_no);
        sw_report_put_crashes(out, job, j, &chart_no);
        put_x8(out, job);
        for (size_t k = 0; k < job->n_sums; k++) put_summary(out, job->sums[k], j, k);
        sw_buf_puts(out, "</section>\n");
    }
    sw_buf_puts(
        out,
        "<footer>Generated by <code>stormwatch report</code> from alert records "
        "(docs/semantics.md). Self-contained: no scripts, nothing loaded from the network.");
    if (rep->n_files) {
        sw_buf_puts(out, " Inputs: ");
        for (size_t i = 0; i < rep->n_files; i++) {
            if (i) sw_buf_puts(out, ", ");
            sw_buf_puts(out, "<code>");
            sw_report_escc(out, rep->files[i]);
            sw_buf_puts(out, "</code>");
        }
        sw_buf_puts(out, ".");
    }
    sw_buf_puts(out, "</footer>\n</main>\n</body>\n</html>\n");
    for (size_t j = 0; j < rep->n_jobs; j++) free(sorted[j]);
    free(sorted);
}
