/*
 * path.h: file names relative to other files, and where the bundled
 * inputs are (the one owner of both: the plan file's jobs_file rule in
 * planner/planio.h and the data lookup of --curves A100, --cluster
 * names and the pollux policy build on these).
 */
#ifndef EF_PATH_H
#define EF_PATH_H

/* Where efplan looks for its bundled inputs, relative to the directory
 * of its own executable (/proc/self/exe), in this order: an installed
 * efplan (PREFIX/bin/efplan, PREFIX/share/efplan/inputs), then one run
 * from the build tree (build/efplan, inputs/). The man page's FILES
 * section prints these. */
#define EF_DATA_BESIDE_INSTALLED "../share/efplan/inputs"
#define EF_DATA_BESIDE_BUILD "../inputs"

/* How ef_datadir found the directory it returns. */
typedef enum ef_data_from {
    EF_DATA_ENV,      /* $EFPLAN_DATA */
    EF_DATA_BESIDE,   /* relative to the executable (the two above) */
    EF_DATA_BUILTIN   /* the directory compiled in (EFPLAN_DATADIR) */
} ef_data_from;

/* The directory of bundled inputs (curves/, clusters/, traces/,
 * jobs/, pollux/): $EFPLAN_DATA when set and not empty (as given, even
 * if it does not exist: the reader that uses it says so); else the
 * first of
 * EF_DATA_BESIDE_INSTALLED and EF_DATA_BESIDE_BUILD, taken from the
 * executable's directory, that is a directory holding curves/ (printed
 * without symbolic links, ".." or "."); else the directory compiled in
 * (the source tree's inputs/ by default: the Makefile's BUILTIN_DATA).
 * So an installed prefix moved elsewhere still finds its data. The
 * executable's side is looked at once per process (thread-safe). *from
 * (when not NULL) says which. Never fails. */
const char *ef_datadir_found(ef_data_from *from);

/* ef_datadir_found(NULL). */
const char *ef_datadir(void);

/* The compiled-in last resort of ef_datadir_found. */
const char *ef_datadir_builtin(void);

/* The name 'path' (absolute, or relative to the current directory)
 * as seen from the directory of the file 'file' (likewise; the file
 * itself need not exist, its directory must): a relative name through
 * both directories without symbolic links, e.g. "../q.json" for
 * path "q.json" and file "plans/p.json"; 'path' itself when it is
 * absolute or 'file' has no directory part; the absolute name (its
 * directory without symbolic links) when the two directories share
 * nothing but the root ("/srv/q.json", not "../../srv/q.json"). NULL when a
 * directory cannot be resolved (missing, unreadable). Heap; free(). */
char *ef_path_from_file(const char *path, const char *file);

/* ef_path_from_file computed whatever 'path' and 'file' are: an
 * absolute 'path', or a 'file' without a directory part, gets the
 * relative name too ("q.json" for "/srv/q.json" and "/srv/p.json"; the
 * absolute one when they share nothing but the root). */
char *ef_path_between(const char *path, const char *file);

/* The name 'rel' as written in the file 'file' relative to that file's
 * directory, as a name for this process: 'rel' when it is absolute or
 * 'file' has no directory part, else "DIR/rel" (DIR as in 'file').
 * Heap; free(). */
char *ef_path_beside(const char *file, const char *rel);

#endif
