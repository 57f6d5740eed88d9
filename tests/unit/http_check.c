/* The helpers of http_check.h. */
#include "http_check.h"

/* ---- exposition checks ------------------------------------------------ */

bool name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
}

bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Check one sample line against the family declared before it.
 * @returns NULL when fine, else what is wrong. */
const char *check_sample(const char *line, size_t len, const char *fam, const char *type)
{
    size_t i = 0;
    if (!len || !name_char(line[0], true)) return "bad metric name";
    while (i < len && name_char(line[i], false)) i++;
    size_t nl = i, fl = strlen(fam);
    if (!fam[0]) return "sample before any # TYPE";
    bool same = nl == fl && memcmp(line, fam, fl) == 0;
    bool bucket = false;
    if (strcmp(type, "histogram") == 0) {
        bool pre = nl > fl && memcmp(line, fam, fl) == 0;
        bucket = pre && nl - fl == 7 && memcmp(line + fl, "_bucket", 7) == 0;
        bool sc = pre && ((nl - fl == 4 && memcmp(line + fl, "_sum", 4) == 0) ||
                          (nl - fl == 6 && memcmp(line + fl, "_count", 6) == 0));
        if (!bucket && !sc) return "sample outside its histogram family";
    } else if (!same) {
        return "sample name differs from its # TYPE";
    }
    if (strcmp(type, "counter") == 0 && !ends_with(line, nl, "_total"))
        return "counter name does not end in _total";
    bool has_le = false;
    if (i < len && line[i] == '{') {
        i++;
        for (;;) {
            size_t l0 = i;
            if (i >= len || !name_char(line[i], true) || line[i] == ':') return "bad label name";
            while (i < len && name_char(line[i], false) && line[i] != ':') i++;
            if (i - l0 == 2 && memcmp(line + l0, "le", 2) == 0) has_le = true;
            if (i + 1 >= len || line[i] != '=' || line[i + 1] != '"') return "expected =\"";
            i += 2;
            while (i < len && line[i] != '"') {
                if (line[i] == '\\') {
                    if (i + 1 >= len || !strchr("\\\"n", line[i + 1])) return "bad escape";
                    i++;
                }
                i++;
            }
            if (i >= len) return "unterminated label value";
            i++;
            if (i < len && line[i] == ',') {
                i++;
                continue;
            }
            if (i < len && line[i] == '}') {
                i++;
                break;
            }
            return "expected , or } after a label";
        }
    }
    if (bucket != has_le) return "le label on the wrong sample";
    if (i >= len || line[i] != ' ') return "expected one space before the value";
    i++;
    char val[64];
    if (len - i == 0 || len - i >= sizeof(val)) return "bad value";
    memcpy(val, line + i, len - i);
    val[len - i] = '\0';
    if (strcmp(val, "+Inf") && strcmp(val, "-Inf") && strcmp(val, "NaN")) {
        char *end;
        strtod(val, &end);
        if (*end) return "value is not a number";
    }
    return NULL;
}

/* Whole-text checks of the 0.0.4 format as stormwatch writes it: every
 * family has one HELP line followed by its TYPE line, before its samples;
 * no family appears twice; samples belong to the family above them. */
int check_exposition(const char *text)
{
    size_t n = strlen(text);
    SW_ASSERT(n > 0 && text[n - 1] == '\n', "output does not end in a newline");
    char seen[64][96];
    int nseen = 0;
    char fam[96] = "", type[16] = "";
    int lineno = 0;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = (size_t)(e - p);
        lineno++;
        if (len >= 7 && memcmp(p, "# HELP ", 7) == 0) {
            const char *sp = memchr(p + 7, ' ', len - 7);
            SW_ASSERT(sp, "line %d: HELP without text: %.*s", lineno, (int)len, p);
            size_t fl = (size_t)(sp - (p + 7));
            SW_ASSERT(fl < sizeof(fam), "line %d: name too long", lineno);
            memcpy(fam, p + 7, fl);
            fam[fl] = '\0';
            for (int k = 0; k < nseen; k++)
                SW_ASSERT(strcmp(seen[k], fam) != 0, "line %d: family %s declared twice", lineno,
                          fam);
            SW_ASSERT(nseen < 64, "too many families");
            snprintf(seen[nseen++], sizeof(seen[0]), "%s", fam);
            const char *t = e + 1;
            const char *te = strchr(t, '\n');
            SW_ASSERT(te, "line %d: HELP is the last line", lineno);
            char want[128];
            int wl = snprintf(want, sizeof(want), "# TYPE %s ", fam);
            SW_ASSERT(strncmp(t, want, (size_t)wl) == 0,
                      "line %d: HELP %s not followed by TYPE: %.*s", lineno, fam, (int)(te - t), t);
            size_t tl = (size_t)(te - (t + wl));
            SW_ASSERT(tl < sizeof(type), "line %d: bad type", lineno);
            memcpy(type, t + wl, tl);
            type[tl] = '\0';
            SW_ASSERT(!strcmp(type, "counter") || !strcmp(type, "gauge") ||
                          !strcmp(type, "histogram"),
                      "line %d: unknown type \"%s\"", lineno, type);
            p = te + 1;
            lineno++;
            continue;
        }
        SW_ASSERT(p[0] != '#', "line %d: unexpected comment: %.*s", lineno, (int)len, p);
        const char *bad = check_sample(p, len, fam, type);
        SW_ASSERT(!bad, "line %d: %s: %.*s", lineno, bad, (int)len, p);
        p = e + 1;
    }
    return 0;
}

/* The value of the sample named exactly @p series (name and labels). */
bool sample_value(const char *text, const char *series, double *v)
{
    size_t sl = strlen(series);
    for (const char *p = text; p && *p;) {
        if (strncmp(p, series, sl) == 0 && p[sl] == ' ') {
            *v = strtod(p + sl + 1, NULL);
            return true;
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return false;
}
