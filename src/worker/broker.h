/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_BROKER_H
#define ENTROPYD_BROKER_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker_draw.h"
#include "egd.h"
#include "options.h"
#include "sink.h"

struct event;
struct event_base;

/*
 * The EGD broker: full entropy (broker_draw.h) for VM guests, over Unix
 * sockets (--egd-socket, one per guest) and TCP (--egd-listen), in the
 * worker. Off unless one is given.
 *
 * Each connection is a client, named by its socket's NAME, else by its
 * peer (uid and pid on a Unix socket, address and port on TCP). A client's
 * requests are answered in order, one at a time (the bytes of consecutive
 * blocking reads go out in one write). A blocking read waits in
 * a queue served round robin, BROKER_CHUNK_BYTES a turn, each client within
 * its rate (--egd-rate bytes a second, a second's worth at once). A client
 * whose socket takes no more gets nothing more until it does, so a slow
 * reader holds at most BROKER_OUT_BYTES; a client that goes away has its
 * unsent bytes wiped. The kernel sink is served before the broker (the
 * engine asks the sink first), and the broker takes at most its share.
 * While its stock of outputs made ahead is short (clients took it, or wait
 * for more), the broker is hungry: the engine reads the credited sources
 * on, even with their reserves full.
 */
#define BROKER_NAME_MAX 72            /* "uid=4294967295,pid=4294967295", an address:port, a NAME */
#define BROKER_INPUT_BYTES 64         /* a client's requests read ahead of the one answered */
/* What a client has been given and not yet read: four blocking reads' bytes at most. */
#define BROKER_OUT_BYTES (4 * (1 + EGD_READ_MAX_BYTES))
#define BROKER_CHUNK_BYTES 32         /* what a waiting client gets per turn */
#define BROKER_ROUND_BYTES 65536      /* given per turn of the loop: then other events go first */
#define BROKER_ACCEPT_BURST 64        /* connections taken per readable listener */
#define BROKER_STARVED_S 10           /* a client waiting this long within its rate: egd:clients warns */
#define BROKER_REFUSED_WARN_S 60      /* a refusal at the cap this recent: egd:clients warns */
#define BROKER_NOTICE_INTERVAL_S 10   /* at most one log line of a kind this often */
/* The wait histogram's upper bounds (seconds), then +Inf. */
#define BROKER_WAIT_BUCKETS 10

/* Connections refused or closed for what they did. */
enum broker_refusal {
	BROKER_REFUSED_FULL,     /* --egd-max-clients connections open already */
	BROKER_REFUSED_WRITE,    /* asked to write entropy (0x03) */
	BROKER_REFUSED_INVALID,  /* an unknown command or a read of 0 bytes */
	BROKER_NREFUSALS
};

/* The counters of one client name: a named socket's outlive its connections. */
struct broker_tally {
	TAILQ_ENTRY(broker_tally) entry;
	char name[BROKER_NAME_MAX];
	bool kept;                /* a named socket's: kept while the daemon runs */
	unsigned connections;     /* open connections of this name */
	bool write_warned;        /* a write was refused and logged */
	uint64_t bytes_served;
	uint64_t requests[EGD_NCOMMANDS];
};

/* One connection. */
struct broker_client {
	TAILQ_ENTRY(broker_client) entry;  /* every client, oldest first */
	TAILQ_ENTRY(broker_client) turn;   /* the queue of blocking reads */
	struct broker_tally *tally;
	char name[BROKER_NAME_MAX];
	const char *socket;       /* the socket it came in on (its path or ADDR:PORT) */
	int fd;
	struct event *ev_read;
	struct event *ev_write;
	uint8_t in[BROKER_INPUT_BYTES];
	size_t in_len;
	uint8_t out[BROKER_OUT_BYTES]; /* the replies being sent */
	size_t out_off, out_len;
	size_t entropy_at;        /* where its entropy starts; out_len when it has none */
	unsigned need_bytes;      /* a blocking read's bytes still owed */
	bool queued;              /* in the queue of blocking reads */
	bool blocked;             /* its last send would have blocked: wait for POLLOUT */
	bool eof;                 /* the client sends no more: close once answered */
	uint64_t tokens;          /* rate: bytes it may take now, times 10^9 */
	uint64_t tokens_ns;       /* when the tokens were last counted */
	uint64_t connected_ns;
	uint64_t request_ns;      /* when the blocking read being answered came */
	uint64_t bytes_served;
	uint64_t requests;
};

TAILQ_HEAD(broker_clients, broker_client);
TAILQ_HEAD(broker_tallies, broker_tally);

/* The broker, for the reports. */
struct broker {
	struct event_base *base;
	const struct sink_supply *supply;
	void (*wake)(void);       /* the engine: read the sources again */
	uint64_t (*now_ns)(void);
	unsigned rate_bytes;      /* per client per second; 0: no limit */
	unsigned max_clients;
	struct broker_draw draw;
	struct broker_clients clients;
	struct broker_clients queue;
	struct broker_tallies tallies;
	unsigned nclients;
	unsigned nwaiting;        /* clients with a blocking read unanswered */
	bool hungry;              /* the stock is short and the reserves cannot make more now */
	struct event *ev_serve;   /* serve the queue at the next turn of the loop */
	struct event *ev_rate;    /* the next time a client held by its rate may be served */
	struct event *ev_wake;    /* tell the engine, outside any of its calls */
	struct broker_listeners *listeners; /* broker_listen.c's */
	/* counters */
	uint64_t bytes_served;
	uint64_t connections;     /* accepted */
	uint64_t refused[BROKER_NREFUSALS];
	uint64_t refused_full_ns; /* the last refusal at the cap */
	uint64_t wait_buckets[BROKER_WAIT_BUCKETS + 1]; /* blocking reads by wait, not cumulative */
	uint64_t wait_count;
	double wait_sum_s;
	uint64_t notice_ns[BROKER_NREFUSALS];  /* the last log line of each kind */
	uint64_t notice_quiet[BROKER_NREFUSALS]; /* lines left out since */
};

/* The histogram's bounds in seconds. */
extern const double broker_wait_bounds_s[BROKER_WAIT_BUCKETS];

/*
 * Serve EGD on the sockets cfg names, on the engine's loop, from the
 * supply's reserves; wake is called (from the loop, never from within a
 * broker_* call) when clients want the sources read. With no socket
 * given it does nothing. 0, or a sysexits code after logging why not.
 */
int broker_start(struct event_base *, const struct config *, const struct sink_supply *,
    void (*wake)(void));
/* Close every connection and socket (before the loop is freed). */
void broker_stop(void);
/* The broker, or NULL when it is off. */
const struct broker *broker_get(void);
/* The engine fed its sink: serve the clients waiting, refill the stock. */
void broker_service(void);
/* Whether the broker wants more than the reserves hold (read the credited sources on). */
bool broker_hungry(void);
/*
 * The VM generation changed: wipe the bytes made and not yet sent (the
 * clients are owed fresh ones instead); returns how many.
 */
size_t broker_forget(void);
/* Whether egd:clients passes: no refusal at the cap lately, no client starved. */
bool broker_healthy(uint64_t now_ns, const char **why);

/* For the listeners and the tests: a connection accepted (fd non-blocking). */
struct broker_client *broker_client_add(int fd, const char *name, const char *socket,
    bool named);
/* For broker_listen.c: note a refusal, logged at most once per interval. */
void broker_refuse(enum broker_refusal, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* For the tests: the clock (clock_now_ns otherwise). */
void broker_set_clock(uint64_t (*now_ns)(void));

/* broker_listen.c: open the sockets cfg names; 0, or a sysexits code with err set. */
int broker_listen_start(struct broker *, const struct config *, char *err, size_t errlen);
/* Close them, removing the Unix sockets made. */
void broker_listen_stop(struct broker *);

#endif
