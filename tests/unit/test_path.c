/* test_path.c: names relative to a file and the data lookup
 * (common/path.h), and the plan file's jobs_file rule built on them
 * (plan_jobs_file_for / plan_jobs_file_find, planner/planio.h). */
#define _GNU_SOURCE 1 /* realpath */
#include "testutil.h"

#include <limits.h>

#include "common/path.h"
#include "planner/planio.h"

/* A scratch tree a/b/, c/q.json, L -> a/b, entered (the previous
 * directory goes to 'old'). */
static void tree(char *dir, size_t len, char *old, size_t oldlen)
{
    tu_tmpdir(dir, len);
    assert_non_null(getcwd(old, oldlen));
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(mkdir("a", 0755), 0);
    assert_int_equal(mkdir("a/b", 0755), 0);
    assert_int_equal(mkdir("c", 0755), 0);
    tu_write("c", "q.json", "{}", NULL, 0);
    assert_int_equal(symlink("a/b", "L"), 0);
}

static void untree(const char *dir, const char *old)
{
    assert_int_equal(chdir(old), 0);
    assert_int_equal(tu_rmtree(dir), 0);
}

/* ef_path_from_file(path, file) is 'want' (NULL: fails). */
static void from(const char *path, const char *file, const char *want)
{
    char *r = ef_path_from_file(path, file);
    if (!want) {
        assert_null(r);
        return;
    }
    assert_non_null(r);
    assert_string_equal(r, want);
    free(r);
}

static void test_from_file(void **state)
{
    char dir[256], old[PATH_MAX], real[PATH_MAX], want[PATH_MAX + 16];
    tree(dir, sizeof dir, old, sizeof old);
    from("c/q.json", "a/b/p.json", "../../c/q.json");
    from("c/q.json", "c/p.json", "q.json");
    from("./c/q.json", "a/p.json", "../c/q.json");
    from("c/q.json", "./p.json", "c/q.json");
    /* no directory part, or an absolute name: as given */
    from("c/q.json", "p.json", "c/q.json");
    from("../x/q.json", "p.json", "../x/q.json");
    from("/srv/q.json", "a/p.json", "/srv/q.json");
    /* through the real directories: L is a/b */
    from("c/q.json", "L/p.json", "../../c/q.json");
    from("L/q.json", "a/p.json", "b/q.json");
    /* nothing shared but the root: the absolute name */
    assert_non_null(realpath(".", real));
    snprintf(want, sizeof want, "%s/c/q.json", real);
    from("c/q.json", "/p.json", want);
    /* ef_path_between: an absolute name, a file without a directory */
    snprintf(want, sizeof want, "%s/c/q.json", real);
    char *r = ef_path_between(want, "c/p.json");
    assert_string_equal(r, "q.json");
    free(r);
    r = ef_path_between("c/q.json", "p.json");
    assert_string_equal(r, "c/q.json");
    free(r);
    /* a directory that is not there */
    from("c/q.json", "nowhere/p.json", NULL);
    from("nowhere/q.json", "a/p.json", NULL);
    untree(dir, old);
}

static void beside(const char *file, const char *rel, const char *want)
{
    char *r = ef_path_beside(file, rel);
    assert_string_equal(r, want);
    free(r);
}

static void test_beside(void **state)
{
    beside("a/b/p.json", "../../c/q.json", "a/b/../../c/q.json");
    beside("p.json", "q.json", "q.json");
    beside("/p.json", "q.json", "/q.json");
    beside("/srv/p.json", "q.json", "/srv/q.json");
    beside("a/p.json", "/x/q.json", "/x/q.json");
}

/* The rule both ways: what is recorded is found again from elsewhere. */
static void test_jobs_file_rule(void **state)
{
    char dir[256], old[PATH_MAX];
    tree(dir, sizeof dir, old, sizeof old);
    char *jf = plan_jobs_file_for("a/b/p.json", "c/q.json");
    assert_string_equal(jf, "../../c/q.json");
    char *found = plan_jobs_file_find("a/b/p.json", jf);
    assert_non_null(found);
    assert_string_equal(found, "a/b/../../c/q.json");
    free(found);
    /* from inside a/: the plan is b/p.json */
    assert_int_equal(chdir("a"), 0);
    found = plan_jobs_file_find("b/p.json", jf);
    assert_non_null(found);
    assert_string_equal(found, "b/../../c/q.json");
    free(found);
    assert_int_equal(chdir(".."), 0);
    free(jf);
    /* standard output, no queue, an absolute queue: as given */
    jf = plan_jobs_file_for("-", "c/q.json");
    assert_string_equal(jf, "c/q.json");
    free(jf);
    jf = plan_jobs_file_for("a/p.json", NULL);
    assert_string_equal(jf, "");
    free(jf);
    jf = plan_jobs_file_for("a/p.json", "/srv/q.json");
    assert_string_equal(jf, "/srv/q.json");
    free(jf);
    /* an older plan's name, relative to where it was made: found from
     * there; beside the plan first when both exist */
    found = plan_jobs_file_find("a/b/p.json", "c/q.json");
    assert_non_null(found);
    assert_string_equal(found, "c/q.json");
    free(found);
    assert_int_equal(mkdir("a/b/c", 0755), 0);
    tu_write("a/b/c", "q.json", "{}", NULL, 0);
    found = plan_jobs_file_find("a/b/p.json", "c/q.json");
    assert_non_null(found);
    assert_string_equal(found, "a/b/c/q.json");
    free(found);
    /* a copy elsewhere (validate --plan --out) names it from there */
    jf = plan_jobs_file_moved("a/b/p.json", "../../c/q.json", "a/p2.json");
    assert_string_equal(jf, "../c/q.json");
    free(jf);
    jf = plan_jobs_file_moved("a/b/p.json", "../../c/q.json", "-");
    assert_string_equal(jf, "../../c/q.json");
    free(jf);
    jf = plan_jobs_file_moved("a/b/p.json", "none.json", "a/p2.json");
    assert_string_equal(jf, "none.json");
    free(jf);
    jf = plan_jobs_file_moved("a/b/p.json", "/srv/q.json", "a/p2.json");
    assert_string_equal(jf, "/srv/q.json");
    free(jf);
    assert_null(plan_jobs_file_find("a/b/p.json", "none.json"));
    assert_null(plan_jobs_file_find("a/b/p.json", ""));
    untree(dir, old);
}

static void test_datadir(void **state)
{
    ef_data_from from;
    const char *was = getenv("EFPLAN_DATA");
    char *keep = was ? strdup(was) : NULL;
    setenv("EFPLAN_DATA", "/somewhere/inputs", 1);
    assert_string_equal(ef_datadir_found(&from), "/somewhere/inputs");
    assert_int_equal(from, EF_DATA_ENV);
    assert_string_equal(ef_datadir(), "/somewhere/inputs");
    /* empty is unset; this program's directory (build/tests) has no
     * inputs beside it: the one compiled in */
    setenv("EFPLAN_DATA", "", 1);
    const char *d = ef_datadir_found(&from);
    assert_int_equal(from, EF_DATA_BUILTIN);
    assert_string_equal(d, ef_datadir_builtin());
    if (keep)
        setenv("EFPLAN_DATA", keep, 1);
    else
        unsetenv("EFPLAN_DATA");
    free(keep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_file),
        cmocka_unit_test(test_beside),
        cmocka_unit_test(test_jobs_file_rule),
        cmocka_unit_test(test_datadir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
