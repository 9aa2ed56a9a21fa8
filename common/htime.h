/*
 * htime.h: times as a person reads and writes them. The one owner of
 * how efplan shows a time (ISO-8601 in UTC or in the local zone, or Unix
 * seconds when a plan is not on the wall clock), how it shows a duration
 * ("8h 05m"), and how it reads a time a person typed: Unix seconds,
 * ISO-8601 (ef_parse_iso8601) or a time relative to "now" ("now",
 * "now+8h", "now-30m", "now+1d12h", as sbatch --deadline=now+8hours).
 * Prefix ef_ht_. Libraries never print; these only fill buffers.
 */
#ifndef EF_HTIME_H
#define EF_HTIME_H

#include <stddef.h>
#include <stdint.h>

/* How a time is shown: as Unix seconds, as ISO-8601 UTC ("...Z") or as
 * ISO-8601 in the local zone (TZ; with its offset, "+01:00"). */
typedef enum { EF_HT_EPOCH = 0, EF_HT_UTC, EF_HT_LOCAL } ef_ht_zone;

/* Times before this (2000-01-01T00:00:00Z) are taken as offsets of a
 * synthetic clock (traces count from 0), not as dates: a plan whose
 * times are all below it is not "on the wall clock". */
#define EF_HT_WALL_MIN 946684800LL

/* 1 iff t reads as a date (t >= EF_HT_WALL_MIN). */
int ef_ht_is_wall(int64_t t);

/* Parse the zone name of --time-zone: "utc", "local" or "epoch" (any
 * case). Returns 0 with *z set, -1 otherwise. */
int ef_ht_zone_parse(const char *s, ef_ht_zone *z);

/* Write t into dst[0..n) as zone 'z' says: "1748913473" (EF_HT_EPOCH:
 * the seconds, on any clock), "2025-06-03T01:17:53Z" (EF_HT_UTC),
 * "2025-06-03T03:17:53+02:00" (EF_HT_LOCAL); a time that is not a date
 * (ef_ht_is_wall: a synthetic clock's) in another zone than EF_HT_EPOCH
 * as its offset from the clock's zero (ef_ht_offset: "+1h 33m 48s").
 * Always NUL-terminated (cut when n is too small; 32 bytes always
 * suffice). Returns dst. */
const char *ef_ht_fmt(int64_t t, ef_ht_zone z, char *dst, size_t n);

/* A synthetic clock's time t (seconds from its zero) as a person reads
 * it, exactly, into dst[0..n): "+" (or "-" before zero), then the
 * largest unit that is not zero and every unit below it down to the last
 * that is not zero, the first unpadded, the others two digits: 5628 is
 * "+1h 33m 48s", 7200 "+2h", 693 "+11m 33s", 259205 "+3d 00h 00m 05s",
 * 0 "+0s". 32 bytes always suffice. Returns dst. */
const char *ef_ht_offset(int64_t t, char *dst, size_t n);

/* A time inside a sentence ("cannot end by its deadline 2025-06-03T...")
 * into dst[0..n): ef_ht_fmt's form when z is not EF_HT_EPOCH (a date on
 * the wall clock, "+1h 33m 48s" on a synthetic one), else "t=N s" (the
 * seconds --time-zone epoch asks for), so a number in a sentence is
 * never taken for a count. 48 bytes always suffice. Returns dst. */
const char *ef_ht_at(int64_t t, ef_ht_zone z, char *dst, size_t n);

/* Write a duration of 'secs' seconds (negative: "-" first) into
 * dst[0..n) as two units at most, rounded down: "45s", "12m 30s",
 * "8h 05m", "3d 04h". 32 bytes always suffice. Returns dst. */
const char *ef_ht_dur(int64_t secs, char *dst, size_t n);

/* Parse a time a person typed into *out: Unix seconds ("1748913473",
 * 0 to EF_MAX_I64), ISO-8601 with a zone ("2025-06-03T01:17:53Z"), a
 * synthetic clock's time as ef_ht_offset writes it ("+1h 33m 48s": "+"
 * then a span, its parts one blank apart or none: 5628), or
 * relative: "now", "now+D" or "now-D" where D is one or more of
 * N followed by a unit: s, m, h, d, w (also sec, min, hour(s), day(s),
 * week(s); "now+1h30m"). 'now' is what "now" means (the caller's
 * --now or the wall clock). Returns 0, or -1 with *why (a static
 * string) set: the reason, naming what was expected. The result must
 * lie in 0..EF_MAX_I64. */
int ef_ht_parse(const char *s, int64_t now, int64_t *out, const char **why);

#endif
