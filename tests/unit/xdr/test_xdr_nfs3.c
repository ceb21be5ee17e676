/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 codecs: every procedure's arguments and results (both arms of each result union) round
 * trip and refuse every truncation; hand-built wire bytes decode to the RFC 1813 layout;
 * oversized lengths are refused; the zero-copy WRITE decoder and READ encoder.
 *
 * The cases are by group of procedures (test_xdr_nfs3_files.c, _names.c, _dirs.c, over the
 * builders of xdr_nfs3_fields.c), the wire layout and lengths in test_xdr_nfs3_wire.c, the
 * zero-copy paths in test_xdr_nfs3_zc.c; this file runs them all. */
#include "xdr_nfs3.h"

/* The groups' cases end to end, in RFC order, run as one group as they always were. */
static const struct xdr_case *all_cases(size_t *n)
{
	const struct { const struct xdr_case *c; size_t n; } groups[] = {
		{ nfs3_file_cases, nfs3_file_cases_n },
		{ nfs3_name_cases, nfs3_name_cases_n },
		{ nfs3_dir_cases, nfs3_dir_cases_n },
	};
	struct xdr_case *all;

	*n = 0;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		*n += groups[i].n;
	all = calloc(*n, sizeof(*all));
	if (!all)
		abort();
	for (size_t i = 0, k = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		for (size_t j = 0; j < groups[i].n; j++)
			all[k++] = groups[i].c[j];
	return all;
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_wire_fh),
		cmocka_unit_test(test_wire_fattr3),
		cmocka_unit_test(test_wire_sattr3),
		cmocka_unit_test(test_wire_readdir_list),
		cmocka_unit_test(test_fh_65_refused),
		cmocka_unit_test(test_huge_lengths_refused),
		cmocka_unit_test(test_length_bounds),
		cmocka_unit_test(test_write_zc),
		cmocka_unit_test(test_write_zc_encode),
		cmocka_unit_test(test_write_zc_truncated),
		cmocka_unit_test(test_write_zc_bad_length),
		cmocka_unit_test(test_write_zc_needs_xdrmem),
		cmocka_unit_test(test_write_peek),
		cmocka_unit_test(test_read_zc),
		cmocka_unit_test(test_read_zc_failure),
		cmocka_unit_test(test_read_zc_refuses),
	};
	int failed = cmocka_run_group_tests_name("xdr_nfs3", tests, NULL, NULL);
	size_t ncases;
	const struct xdr_case *cases = all_cases(&ncases);

	failed += xdr_run_cases("xdr_nfs3_types", cases, ncases, sizeof(struct scratch));
	free((void *)cases);
	return failed ? 1 : 0;
}
