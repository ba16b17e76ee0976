/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_BENCH_EGD_H
#define ENTROPYD_BENCH_EGD_H

/* bench.c's monotonic clock in seconds. */
double bench_now(void);
/* entropyd-bench egd CLIENTS SECONDS SOCKET: "egd BYTES SECONDS JAIN". */
int bench_egd_rate(int nclients, double seconds, const char *path);
/* entropyd-bench egdlat COUNT SOCKET: "egdlat P50_MS P99_MS" of 64-byte blocking reads. */
int bench_egd_latency(int count, const char *path);
/* entropyd-bench egdrss CLIENTS SOCKET PID: "egdrss KIB_PER_CLIENT" of PID's RSS. */
int bench_egd_rss(int nclients, const char *path, long pid);
/* entropyd-bench egdpace FILE BYTES_PER_S: FILE over and over to stdout at that rate. */
int bench_egd_pace(const char *path, double rate);

#endif
