/* htime.c: times as a person reads and writes them (htime.h). */
#define _DEFAULT_SOURCE /* struct tm's tm_gmtoff */
#include "common/htime.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/err.h"
#include "common/util.h"

int ef_ht_is_wall(int64_t t)
{
    return t >= EF_HT_WALL_MIN;
}

int ef_ht_zone_parse(const char *s, ef_ht_zone *z)
{
    static const struct { const char *name; ef_ht_zone z; } names[] = {
        {"utc", EF_HT_UTC}, {"local", EF_HT_LOCAL}, {"epoch", EF_HT_EPOCH}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0) {
            *z = names[i].z;
            return 0;
        }
    return -1;
}

const char *ef_ht_offset(int64_t t, char *dst, size_t n)
{
    /* the magnitude, kept unsigned so INT64_MIN has one */
    uint64_t a = t < 0 ? (uint64_t)0 - (uint64_t)t : (uint64_t)t;
    uint64_t v[4] = {a / 86400, a / 3600 % 24, a / 60 % 60, a % 60};
    static const char unit[4] = {'d', 'h', 'm', 's'};
    if (n == 0)
        return dst;
    int first = 0, last = 3;
    while (first < 3 && v[first] == 0)
        first++;
    while (last > first && v[last] == 0)
        last--;
    size_t k = (size_t)snprintf(dst, n, "%c", t < 0 ? '-' : '+');
    for (int i = first; i <= last && k < n; i++)
        k += (size_t)snprintf(dst + k, n - k, i == first ? "%s%llu%c"
                                                         : "%s%02llu%c",
                              i == first ? "" : " ",
                              (unsigned long long)v[i], unit[i]);
    return dst;
}

const char *ef_ht_fmt(int64_t t, ef_ht_zone z, char *dst, size_t n)
{
    time_t tt = (time_t)t; /* the time as libc takes it */
    struct tm tm;          /* its broken-down form in the chosen zone */
    if (n == 0)
        return dst;
    if (z != EF_HT_EPOCH && !ef_ht_is_wall(t))
        return ef_ht_offset(t, dst, n);
    if (z == EF_HT_EPOCH || !ef_ht_is_wall(t) ||
        (z == EF_HT_UTC ? gmtime_r(&tt, &tm) : localtime_r(&tt, &tm)) ==
            NULL) {
        snprintf(dst, n, "%lld", (long long)t);
        return dst;
    }
    char date[24]; /* YYYY-MM-DDTHH:MM:SS */
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    if (z == EF_HT_UTC) {
        snprintf(dst, n, "%sZ", date);
        return dst;
    }
    long off = tm.tm_gmtoff; /* seconds east of UTC */
    long a = off < 0 ? -off : off;
    if (off == 0)
        snprintf(dst, n, "%sZ", date);
    else
        snprintf(dst, n, "%s%c%02ld:%02ld", date, off < 0 ? '-' : '+',
                 a / 3600, a / 60 % 60);
    return dst;
}

const char *ef_ht_at(int64_t t, ef_ht_zone z, char *dst, size_t n)
{
    char b[48]; /* the time alone */
    ef_ht_fmt(t, z, b, sizeof b);
    if (z != EF_HT_EPOCH)
        snprintf(dst, n, "%s", b);
    else
        snprintf(dst, n, "t=%s s", b);
    return dst;
}

const char *ef_ht_dur(int64_t secs, char *dst, size_t n)
{
    const char *sign = secs < 0 ? "-" : "";
    /* the magnitude, kept unsigned so INT64_MIN has one */
    uint64_t a = secs < 0 ? (uint64_t)0 - (uint64_t)secs : (uint64_t)secs;
    if (n == 0)
        return dst;
    if (a < 60)
        snprintf(dst, n, "%s%llus", sign, (unsigned long long)a);
    else if (a < 3600)
        snprintf(dst, n, "%s%llum %02llus", sign,
                 (unsigned long long)(a / 60), (unsigned long long)(a % 60));
    else if (a < 86400)
        snprintf(dst, n, "%s%lluh %02llum", sign,
                 (unsigned long long)(a / 3600),
                 (unsigned long long)(a / 60 % 60));
    else
        snprintf(dst, n, "%s%llud %02lluh", sign,
                 (unsigned long long)(a / 86400),
                 (unsigned long long)(a / 3600 % 24));
    return dst;
}

/* The seconds in one unit named by s[0..len), or 0 when it names none. */
static int64_t unit_seconds(const char *s, size_t len)
{
    static const struct { const char *name; int64_t secs; } units[] = {
        {"s", 1},        {"sec", 1},       {"secs", 1},     {"second", 1},
        {"seconds", 1},  {"m", 60},        {"min", 60},     {"mins", 60},
        {"minute", 60},  {"minutes", 60},  {"h", 3600},     {"hour", 3600},
        {"hours", 3600}, {"d", 86400},     {"day", 86400},  {"days", 86400},
        {"w", 604800},   {"week", 604800}, {"weeks", 604800}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == len &&
            strncasecmp(s, units[i].name, len) == 0)
            return units[i].secs;
    return 0;
}

/* Parse the "N unit [N unit ...]" of a relative time at p into *secs. */
static int parse_span(const char *p, int64_t *secs, const char **why)
{
    int64_t sum = 0; /* the seconds read so far */
    if (*p == '\0') {
        *why = "nothing after the sign (expected e.g. now+8h)";
        return -1;
    }
    while (*p) {
        int64_t v = 0; /* the number before a unit */
        if (!isdigit((unsigned char)*p)) {
            *why = "expected a number then a unit (s, m, h, d, w), "
                   "e.g. now+8h or now+1h30m";
            return -1;
        }
        while (isdigit((unsigned char)*p)) {
            v = v * 10 + (*p++ - '0');
            if (v > EF_MAX_I64) {
                *why = "the span is too large";
                return -1;
            }
        }
        const char *u = p; /* the unit's first letter */
        while (isalpha((unsigned char)*p))
            p++;
        int64_t us = unit_seconds(u, (size_t)(p - u));
        if (us == 0) {
            *why = p == u ? "a number without a unit (expected s, m, h, d "
                            "or w, e.g. now+90m)"
                          : "unknown unit (expected s, m, h, d or w)";
            return -1;
        }
        if (v > (EF_MAX_I64 - sum) / us) {
            *why = "the span is too large";
            return -1;
        }
        sum += v * us;
        /* "1h 33m 48s", as ef_ht_offset writes it: one blank between */
        if (*p == ' ' && isdigit((unsigned char)p[1]))
            p++;
    }
    *secs = sum;
    return 0;
}

int ef_ht_parse(const char *s, int64_t now, int64_t *out, const char **why)
{
    const char *w = NULL; /* the reason, when s is refused */
    int64_t v;            /* the time read */
    if (strncasecmp(s, "now", 3) == 0) {
        const char *p = s + 3; /* after "now" */
        int64_t span = 0;
        int sign = 1;
        if (*p == '+' || *p == '-') {
            sign = *p == '-' ? -1 : 1;
            if (parse_span(p + 1, &span, &w) != 0)
                goto bad;
        } else if (*p != '\0') {
            w = "expected now, now+SPAN or now-SPAN (e.g. now+8h)";
            goto bad;
        }
        if (now < 0 || now > EF_MAX_I64 ||
            (sign > 0 && span > EF_MAX_I64 - now) ||
            (sign < 0 && span > now)) {
            w = sign < 0 ? "before the start of the clock (time 0)"
                         : "later than efplan's largest time (10^15)";
            goto bad;
        }
        *out = now + sign * span;
        return 0;
    }
    if (s[0] == '+') { /* a synthetic clock's time (ef_ht_offset) */
        if (parse_span(s + 1, &v, &w) != 0)
            goto bad;
        *out = v;
        return 0;
    }
    if (isdigit((unsigned char)s[0]) && strchr(s, '-') == NULL &&
        strchr(s, ':') == NULL) {
        if (ef_parse_i64(s, 0, EF_MAX_I64, &v) != EF_NUM_OK) {
            w = "expected Unix seconds from 0 to 10^15, ISO-8601 "
                "(2025-06-03T08:00:00Z) or now+SPAN";
            goto bad;
        }
        *out = v;
        return 0;
    }
    if (ef_parse_iso8601(s, &v, &w) != EF_OK)
        goto bad;
    if (v < 0 || v > EF_MAX_I64) {
        w = "before 1970 or after efplan's largest time";
        goto bad;
    }
    *out = v;
    return 0;
bad:
    if (why)
        *why = w;
    return -1;
}
