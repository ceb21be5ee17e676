/* The counters program (see stats.c). */
#ifndef NFSD_UC_STATS_H
#define NFSD_UC_STATS_H

#define STATS_PROGRAM 0x20004e55u
#define STATS_V1 1

#endif
