/* main.c — the Check test runner: every suite in suites.h. GPU tests skip (with a message)
 * where no GPU is present. */
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

int main(void)
{
    SRunner *runner = srunner_create(NULL);
#define PJ_SUITE_ADD(name) srunner_add_suite(runner, name());
    PJ_TEST_SUITES(PJ_SUITE_ADD)
#undef PJ_SUITE_ADD
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
