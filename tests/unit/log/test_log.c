/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log_quote: a client's string in a log line can neither break the line nor be mistaken for one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <stdio.h>
#include <cmocka.h>

#include "base/log.h"

static void test_plain(void **state)
{
	(void)state;
	char q[LOG_QUOTE_SIZE];
	assert_string_equal(log_quote(q, "/srv/export"), "\"/srv/export\"");
	assert_string_equal(log_quote(q, ""), "\"\"");
	assert_string_equal(log_quote(q, NULL), "(none)");
}

/* A forged second line, a journal priority, quotes, backslashes and bytes past ASCII. */
static void test_escapes(void **state)
{
	(void)state;
	char q[LOG_QUOTE_SIZE];
	assert_string_equal(log_quote(q, "a\n<0>forged"), "\"a\\x0a<0>forged\"");
	assert_string_equal(log_quote(q, "\r\t\x1b[31m"), "\"\\x0d\\x09\\x1b[31m\"");
	assert_string_equal(log_quote(q, "say \"hi\" \\o/"), "\"say \\\"hi\\\" \\\\o/\"");
	assert_string_equal(log_quote(q, "caf\xc3\xa9\x7f"), "\"caf\\xc3\\xa9\\x7f\"");
}

/* At most LOG_QUOTE_MAX of the string's bytes, then "...": the worst case fits the buffer. */
static void test_bounded(void **state)
{
	(void)state;
	char in[4 * LOG_QUOTE_MAX], q[LOG_QUOTE_SIZE], want[LOG_QUOTE_MAX + 8];
	memset(in, 'x', sizeof in - 1);
	in[sizeof in - 1] = '\0';
	snprintf(want, sizeof want, "\"%.*s\"...", LOG_QUOTE_MAX, in);
	assert_string_equal(log_quote(q, in), want);
	in[LOG_QUOTE_MAX] = '\0';   /* exactly the bound: not cut */
	snprintf(want, sizeof want, "\"%.*s\"", LOG_QUOTE_MAX, in);
	assert_string_equal(log_quote(q, in), want);
	memset(in, 0x01, sizeof in - 1);
	in[sizeof in - 1] = '\0';
	assert_int_equal(strlen(log_quote(q, in)), LOG_QUOTE_SIZE - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
