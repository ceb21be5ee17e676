/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc --dump-config: the configuration in force, defaults included, in the file's own syntax
 * (what nfsconf --dump and exportfs -v are to knfsd). Every key comes from the parser's tables,
 * so a key added there is dumped without a line here. */
#include <stdio.h>

#include "conf/config.h"
#include "conf/config_int.h"

static void dump_keys(FILE *f, const char *lead, const struct key_def *keys, const void *obj)
{
	char val[8192];
	for (const struct key_def *k = keys; k->name; k++) {
		val[0] = '\0';
		k->show(k, obj, val, sizeof val);
		if (val[0])
			fprintf(f, "%s%s = %s\n", lead, k->name, val);
		else
			fprintf(f, "# %s is not set\n", k->name);
	}
}

/* An export of exports_dir is shown where it is in force but commented out: the dump, loaded
 * with the same exports_dir, reads it from there again (and would refuse it twice). */
static void dump_export(FILE *f, const struct export_cfg *e)
{
	const char *lead = e->dropin ? "# " : "";
	if (e->dropin)
		fprintf(f, "\n# from %s (exports_dir):\n", e->dropin);
	else
		fputc('\n', f);
	fprintf(f, "%s[export %s]\n", lead, e->path);
	dump_keys(f, lead, cfg_export_keys, e);
}

void config_dump(const struct config *c, FILE *f)
{
	fputs("[server]\n", f);
	dump_keys(f, "", cfg_server_keys, c);
	fputs("\n[cache]\n", f);
	dump_keys(f, "", cfg_cache_keys, c);
	fputs("\n[metrics]\n", f);
	dump_keys(f, "", cfg_metrics_keys, c);
	fputs("\n[lock]\n", f);
	dump_keys(f, "", cfg_lock_keys, c);
	for (size_t i = 0; i < c->nexports; i++)
		dump_export(f, &c->exports[i]);
}
