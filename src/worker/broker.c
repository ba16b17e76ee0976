/* SPDX-License-Identifier: MIT */
/*
 * The EGD broker's clients: each connection's requests answered in order,
 * blocking reads served round robin within each client's rate, replies
 * written without blocking and wiped as they go. The sockets are
 * broker_listen.c's, the bytes broker_draw.c's.
 */
#include <sys/socket.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker.h"
#include "clock.h"
#include "log.h"
#include "xmalloc.h"

/* What a client's turn in the queue came to. */
enum broker_turn {
	BROKER_TURN_GAVE,     /* bytes were given */
	BROKER_TURN_IDLE,     /* nothing to give now: its socket takes no more, or its rate */
	BROKER_TURN_DRY,      /* it could take bytes and none can be made */
	BROKER_TURN_CLOSED,   /* it went away (freed) */
};

const double broker_wait_bounds_s[BROKER_WAIT_BUCKETS] = {
	0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60,
};

static const char *const broker_refusal_names[BROKER_NREFUSALS] = {
	[BROKER_REFUSED_FULL] = "full",
	[BROKER_REFUSED_WRITE] = "write",
	[BROKER_REFUSED_INVALID] = "invalid",
};

static struct broker *broker;
static uint64_t (*broker_clock)(void) = clock_now_ns;

static void broker_advance(struct broker_client *);
static void broker_schedule(void);

/* The time now, by the broker's clock. */
static uint64_t
broker_now(void)
{
	return broker->now_ns();
}

void
broker_set_clock(uint64_t (*now_ns)(void))
{
	broker_clock = now_ns != NULL ? now_ns : clock_now_ns;
	if (broker != NULL)
		broker->now_ns = broker_clock;
}

const struct broker *
broker_get(void)
{
	return broker;
}

void
broker_refuse(enum broker_refusal why, const char *fmt, ...)
{
	uint64_t now = broker_now(), last = broker->notice_ns[why];
	char msg[512];
	va_list ap;

	broker->refused[why]++;
	if (why == BROKER_REFUSED_FULL)
		broker->refused_full_ns = now;
	if (last != 0 && now - last < BROKER_NOTICE_INTERVAL_S * UINT64_C(1000000000)) {
		broker->notice_quiet[why]++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (broker->notice_quiet[why] > 0)
		log_warnx("egd: %s (%" PRIu64 " more refused as %s since the last line)", msg,
		    broker->notice_quiet[why], broker_refusal_names[why]);
	else
		log_warnx("egd: %s", msg);
	broker->notice_ns[why] = now;
	broker->notice_quiet[why] = 0;
}

/* The counters of a name: a named socket's are kept, the others' go with the last connection. */
static struct broker_tally *
broker_tally_get(const char *name, bool named)
{
	struct broker_tally *t;

	TAILQ_FOREACH(t, &broker->tallies, entry)
		if (strcmp(t->name, name) == 0)
			break;
	if (t == NULL) {
		t = xcalloc(1, sizeof *t);
		snprintf(t->name, sizeof t->name, "%s", name);
		TAILQ_INSERT_TAIL(&broker->tallies, t, entry);
	}
	t->kept |= named;
	t->connections++;
	return t;
}

/* A connection of the name closed. */
static void
broker_tally_put(struct broker_tally *t)
{
	if (--t->connections > 0 || t->kept)
		return;
	TAILQ_REMOVE(&broker->tallies, t, entry);
	free(t);
}

/* Put a client with a blocking read in the queue, last. */
static void
broker_enqueue(struct broker_client *c)
{
	if (c->queued)
		return;
	TAILQ_INSERT_TAIL(&broker->queue, c, turn);
	c->queued = true;
}

/* Take a client out of the queue. */
static void
broker_dequeue(struct broker_client *c)
{
	if (!c->queued)
		return;
	TAILQ_REMOVE(&broker->queue, c, turn);
	c->queued = false;
}

/* Wipe everything a client holds, close it and free it. */
static void
broker_close(struct broker_client *c, const char *why)
{
	size_t unsent = c->out_len - c->out_off;

	if (c->entropy_at < c->out_len && unsent > 0)
		log_debug("egd: %s: closed (%s); %zu bytes not sent are wiped", c->name, why,
		    c->out_len - (c->out_off > c->entropy_at ? c->out_off : c->entropy_at));
	else
		log_debug("egd: %s: closed (%s)", c->name, why);
	explicit_bzero(c->out, sizeof c->out);
	explicit_bzero(c->in, sizeof c->in);
	broker_dequeue(c);
	if (c->need_bytes > 0)
		broker->nwaiting--;
	event_free(c->ev_read);
	event_free(c->ev_write);
	close(c->fd);
	broker_tally_put(c->tally);
	TAILQ_REMOVE(&broker->clients, c, entry);
	broker->nclients--;
	free(c);
}

/* Count the tokens a client earned since they were last counted (none with no limit). */
static void
broker_tokens_update(struct broker_client *c, uint64_t now)
{
	uint64_t full = (uint64_t)broker->rate_bytes * 1000000000u;

	if (broker->rate_bytes == 0)
		return;
	if (now > c->tokens_ns && c->tokens < full) {
		uint64_t earned = (now - c->tokens_ns) * broker->rate_bytes;

		c->tokens = earned >= full - c->tokens ? full : c->tokens + earned;
	}
	c->tokens_ns = now;
}

/* The bytes a client may take now, at most max. */
static size_t
broker_tokens_bytes(const struct broker_client *c, size_t max)
{
	uint64_t have;

	if (broker->rate_bytes == 0)
		return max;
	have = c->tokens / 1000000000u;
	return have < max ? (size_t)have : max;
}

/* A client took n bytes: its tokens, its counters. */
static void
broker_served(struct broker_client *c, size_t n)
{
	if (broker->rate_bytes != 0)
		c->tokens -= (uint64_t)n * 1000000000u;
	c->bytes_served += n;
	c->tally->bytes_served += n;
	broker->bytes_served += n;
}

/*
 * Send what is left of the reply, wiping each byte once it is sent; wait
 * for POLLOUT when the client is slow. False when the client went away
 * (it is freed).
 */
static bool
broker_flush(struct broker_client *c)
{
	ssize_t n;

	while (c->out_off < c->out_len) {
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			c->blocked = true;
			event_add(c->ev_write, NULL);
			return true;
		}
		if (n <= 0) {
			broker_close(c, n == 0 ? "wrote nothing" : strerror(errno));
			return false;
		}
		explicit_bzero(c->out + c->out_off, (size_t)n);
		c->out_off += (size_t)n;
	}
	c->out_off = c->out_len = c->entropy_at = 0;
	return true;
}

/* A blocking read was answered in full: note how long it waited. */
static void
broker_read_done(struct broker_client *c, uint64_t now)
{
	double waited = (double)(now - c->request_ns) / 1e9;
	size_t i;

	for (i = 0; i < BROKER_WAIT_BUCKETS && waited > broker_wait_bounds_s[i]; i++)
		continue;
	broker->wait_buckets[i]++;
	broker->wait_count++;
	broker->wait_sum_s += waited;
	broker->nwaiting--;
	broker_dequeue(c);
}

/*
 * A waiting client's turn: up to BROKER_CHUNK_BYTES (its whole need if
 * less), unless it is slow to read what it was sent, once its rate allows
 * them all. The chunks of a read go out once the rounds are served
 * (broker_serve), the last at once.
 */
static enum broker_turn
broker_turn(struct broker_client *c, uint64_t now, size_t *given)
{
	size_t want = c->need_bytes < BROKER_CHUNK_BYTES ? c->need_bytes : BROKER_CHUNK_BYTES, n;

	if (c->blocked || want == 0)
		return BROKER_TURN_IDLE;
	broker_tokens_update(c, now);
	if (broker_tokens_bytes(c, want) < want)
		return BROKER_TURN_IDLE;
	if ((n = broker_draw_give(&broker->draw, broker->supply, c->out + c->out_len, want)) == 0)
		return BROKER_TURN_DRY;
	c->out_len += n;
	c->need_bytes -= (unsigned)n;
	broker_served(c, n);
	*given += n;
	if (c->need_bytes > 0)
		return BROKER_TURN_GAVE;
	broker_read_done(c, now);
	/* The next blocking read goes on in the same write; anything else, once this is sent. */
	broker_advance(c);
	if (c->queued)
		return BROKER_TURN_GAVE;
	if (!broker_flush(c))
		return BROKER_TURN_CLOSED;
	if (c->out_len == 0)
		broker_advance(c);
	return BROKER_TURN_GAVE;
}

/* When the first client held by its rate may take its next bytes; 0 when none is. */
static uint64_t
broker_next_due(uint64_t now)
{
	struct broker_client *c;
	uint64_t due = 0, at;
	size_t want;

	if (broker->rate_bytes == 0)
		return 0;
	TAILQ_FOREACH(c, &broker->queue, turn) {
		want = c->need_bytes < BROKER_CHUNK_BYTES ? c->need_bytes : BROKER_CHUNK_BYTES;
		if (c->blocked || broker_tokens_bytes(c, want) >= want)
			continue;
		at = c->tokens_ns + ((uint64_t)want * 1000000000u - c->tokens +
		    broker->rate_bytes - 1) / broker->rate_bytes;
		if (due == 0 || at < due)
			due = at;
	}
	return due == 0 ? 0 : due > now ? due : now;
}

/* Arm the rate timer for the next client held by its rate. */
static void
broker_arm_rate(uint64_t now)
{
	uint64_t due = broker_next_due(now), wait_ns;
	struct timeval tv;

	if (due == 0) {
		evtimer_del(broker->ev_rate);
		return;
	}
	wait_ns = due - now;
	tv.tv_sec = (time_t)(wait_ns / 1000000000u);
	tv.tv_usec = (suseconds_t)(wait_ns % 1000000000u / 1000u) + 1;
	evtimer_add(broker->ev_rate, &tv);
}

/* Send what each waiting client was given in the rounds just served (one write each). */
static void
broker_flush_queue(void)
{
	struct broker_client *c, *next;

	for (c = TAILQ_FIRST(&broker->queue); c != NULL; c = next) {
		next = TAILQ_NEXT(c, turn);
		if (!c->blocked && c->out_off < c->out_len)
			broker_flush(c);
	}
}

/*
 * Serve the queue round robin, a chunk a turn, until nothing more can be
 * given; a client that found nothing to take keeps its place at the head.
 * After BROKER_ROUND_BYTES the rest waits for the next turn of the loop,
 * so the control server and the other clients are never held up. Then send
 * what each client was given, and refill the stock.
 */
static void
broker_serve(void)
{
	struct broker_client *c;
	uint64_t now = broker_now();
	size_t given = 0, n;
	bool progress = true, dry = false, was_hungry = broker->hungry;

	while (progress && !dry && given < BROKER_ROUND_BYTES) {
		progress = false;
		for (n = broker->nwaiting; n > 0 && !dry && given < BROKER_ROUND_BYTES &&
		    (c = TAILQ_FIRST(&broker->queue)) != NULL; n--) {
			broker_dequeue(c);
			broker_enqueue(c);
			switch (broker_turn(c, now, &given)) {
			case BROKER_TURN_GAVE:
				progress = true;
				break;
			case BROKER_TURN_DRY:
				broker_dequeue(c);
				TAILQ_INSERT_HEAD(&broker->queue, c, turn);
				c->queued = true;
				dry = true;
				break;
			default:
				break;
			}
		}
	}
	broker_flush_queue();
	if (given >= BROKER_ROUND_BYTES)
		broker_schedule();
	/* The stock made ahead; the sources are read on while it is short. */
	broker->hungry = !broker_draw_fill(&broker->draw, broker->supply);
	/* A reserve drawn low, or the stock short: the engine looks again at what to read. */
	if ((broker->hungry && !was_hungry) || broker->draw.reserve_low)
		event_active(broker->ev_wake, EV_TIMEOUT, 0);
	broker->draw.reserve_low = false;
	broker_arm_rate(now);
}

/* Serve the queue at the next turn of the loop (after the events ready now). */
static void
broker_schedule(void)
{
	static const struct timeval soon = { 0, 0 };

	if (!evtimer_pending(broker->ev_serve, NULL))
		evtimer_add(broker->ev_serve, &soon);
}

/* Answer a request that needs no waiting into the client's reply. */
static void
broker_answer_now(struct broker_client *c, const struct egd_request *req)
{
	size_t n;

	broker_tokens_update(c, broker_now());
	switch (req->command) {
	case EGD_AVAILABLE:
		egd_put_available(c->out, broker_tokens_bytes(c,
		    (size_t)broker_draw_ready(&broker->draw, broker->supply)));
		c->out_len = EGD_AVAILABLE_REPLY_BYTES;
		break;
	case EGD_READ_NONBLOCKING:
		n = broker_draw_give(&broker->draw, broker->supply, c->out + 1,
		    broker_tokens_bytes(c, req->len_bytes));
		c->out[0] = (uint8_t)n;
		c->out_len = 1 + n;
		c->entropy_at = 1;
		broker_served(c, n);
		break;
	default:
		c->out_len = egd_put_pid(c->out, (unsigned long)getpid());
		break;
	}
	if (req->command != EGD_READ_NONBLOCKING)
		c->entropy_at = c->out_len;
}

/*
 * Take the client's next request and answer it, while no blocking read of
 * it waits and its last reply is sent, or is a blocking read's and leaves
 * room for another (their bytes then go out in one write): the requests of
 * one client are answered in order, one at a time.
 */
static void
broker_advance(struct broker_client *c)
{
	struct egd_request req;
	size_t used;

	while (c->need_bytes == 0 && (c->out_len == 0 || (c->entropy_at == 0 &&
	    c->out_len + EGD_READ_MAX_BYTES <= sizeof c->out))) {
		if (egd_parse(c->in, c->in_len, &req, &used) == EGD_NEED_MORE) {
			if (c->eof && c->out_len == 0) {
				broker_close(c, "end of input");
				return;
			}
			break;
		}
		/* Only a blocking read's bytes may follow another's before it is sent. */
		if (c->out_len > 0 && req.command != EGD_READ_BLOCKING)
			break;
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
		c->requests++;
		c->tally->requests[req.command]++;
		switch (req.command) {
		case EGD_READ_BLOCKING:
			c->need_bytes = req.len_bytes;
			c->request_ns = broker_now();
			c->entropy_at = 0;
			broker->nwaiting++;
			broker_enqueue(c);
			broker_schedule();
			break;
		case EGD_WRITE:
			if (!c->tally->write_warned)
				broker_refuse(BROKER_REFUSED_WRITE, "%s: refused a write of entropy: the "
				    "broker takes none from its clients; closing", c->name);
			else
				broker->refused[BROKER_REFUSED_WRITE]++;
			c->tally->write_warned = true;
			broker_close(c, "a write");
			return;
		case EGD_INVALID:
			broker_refuse(BROKER_REFUSED_INVALID, "%s: invalid request 0x%02x%s; closing",
			    c->name, req.byte, req.len_bytes == 0 && req.byte <= 0x02 ?
			    " of 0 bytes" : "");
			broker_close(c, "an invalid request");
			return;
		default:
			broker_answer_now(c, &req);
			if (!broker_flush(c))
				return;
			break;
		}
	}
	/* Read more requests while there is room for them. */
	if (!c->eof && c->in_len < sizeof c->in)
		event_add(c->ev_read, NULL);
}

/* A client sent something, or closed. */
static void
broker_readable(int fd, short what, void *arg)
{
	struct broker_client *c = arg;
	ssize_t n = recv(fd, c->in + c->in_len, sizeof c->in - c->in_len, 0);

	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n == -1) {
		broker_close(c, strerror(errno));
		return;
	}
	if (n == 0)
		c->eof = true;
	c->in_len += (size_t)n;
	if (c->eof || c->in_len == sizeof c->in)
		event_del(c->ev_read);
	broker_advance(c);
}

/* A slow client can take more of its reply. */
static void
broker_writable(int fd, short what, void *arg)
{
	struct broker_client *c = arg;

	c->blocked = false;
	if (!broker_flush(c) || c->out_len > 0)
		return;
	if (c->need_bytes > 0)
		broker_schedule();
	else
		broker_advance(c);
}

struct broker_client *
broker_client_add(int fd, const char *name, const char *socket, bool named)
{
	struct broker_client *c = xcalloc(1, sizeof *c);

	c->fd = fd;
	snprintf(c->name, sizeof c->name, "%s", name);
	c->socket = socket;
	c->tally = broker_tally_get(c->name, named);
	c->ev_read = event_new(broker->base, fd, EV_READ | EV_PERSIST, broker_readable, c);
	c->ev_write = event_new(broker->base, fd, EV_WRITE, broker_writable, c);
	c->connected_ns = c->tokens_ns = broker_now();
	/* A second's worth at once: the burst. */
	c->tokens = (uint64_t)broker->rate_bytes * 1000000000u;
	TAILQ_INSERT_TAIL(&broker->clients, c, entry);
	broker->nclients++;
	broker->connections++;
	event_add(c->ev_read, NULL);
	log_debug("egd: %s: connected on %s", c->name, socket);
	return c;
}

/* The queue's turn of the loop. */
static void
broker_serve_due(int fd, short what, void *arg)
{
	broker_serve();
}

/* Clients want the sources read: tell the engine, outside its own calls. */
static void
broker_wake_engine(int fd, short what, void *arg)
{
	if (broker->wake != NULL)
		broker->wake();
}

void
broker_service(void)
{
	if (broker != NULL)
		broker_serve();
}

bool
broker_hungry(void)
{
	return broker != NULL && broker->hungry;
}

size_t
broker_forget(void)
{
	struct broker_client *c;
	size_t held, from, wiped;

	if (broker == NULL)
		return 0;
	held = broker_draw_forget(&broker->draw);
	TAILQ_FOREACH(c, &broker->clients, entry) {
		from = c->out_off > c->entropy_at ? c->out_off : c->entropy_at;
		if (from >= c->out_len)
			continue;
		/* Owed again, to be made from fresh reads: a non-blocking read now waits too. */
		wiped = c->out_len - from;
		explicit_bzero(c->out + from, wiped);
		c->out_len = from;
		if (c->need_bytes == 0) {
			c->request_ns = broker_now();
			broker->nwaiting++;
		}
		c->need_bytes += (unsigned)wiped;
		broker_enqueue(c);
		held += wiped;
	}
	if (broker->nwaiting > 0)
		broker_schedule();
	return held;
}

bool
broker_healthy(uint64_t now_ns, const char **why)
{
	const struct broker_client *c;
	size_t want;

	if (broker->refused_full_ns != 0 &&
	    now_ns - broker->refused_full_ns < BROKER_REFUSED_WARN_S * UINT64_C(1000000000)) {
		*why = "connections were refused at --egd-max-clients in the last minute";
		return false;
	}
	TAILQ_FOREACH(c, &broker->queue, turn) {
		want = c->need_bytes < BROKER_CHUNK_BYTES ? c->need_bytes : BROKER_CHUNK_BYTES;
		if (now_ns - c->request_ns >= BROKER_STARVED_S * UINT64_C(1000000000) &&
		    !c->blocked && broker_tokens_bytes(c, want) >= want) {
			*why = "a client waits for bytes within its rate and none can be made: no "
			    "healthy credited source has enough, or --egd-share is too small";
			return false;
		}
	}
	*why = NULL;
	return true;
}

int
broker_start(struct event_base *base, const struct config *cfg,
    const struct sink_supply *supply, void (*wake)(void))
{
	char err[512];
	int rc;

	if (cfg->n_egd_sockets == 0 && cfg->n_egd_listen == 0)
		return 0;
	broker = xcalloc(1, sizeof *broker);
	broker->base = base;
	broker->supply = supply;
	broker->wake = wake;
	broker->now_ns = broker_clock;
	broker->rate_bytes = cfg->egd_rate_bytes;
	broker->max_clients = cfg->egd_max_clients;
	TAILQ_INIT(&broker->clients);
	TAILQ_INIT(&broker->queue);
	TAILQ_INIT(&broker->tallies);
	broker_draw_init(&broker->draw, cfg->egd_share_percent);
	broker->ev_serve = evtimer_new(base, broker_serve_due, NULL);
	broker->ev_rate = evtimer_new(base, broker_serve_due, NULL);
	broker->ev_wake = event_new(base, -1, 0, broker_wake_engine, NULL);
	if ((rc = broker_listen_start(broker, cfg, err, sizeof err)) != 0) {
		log_warnx("egd: %s", err);
		broker_stop();
		return rc;
	}
	if (cfg->egd_rate_bytes == 0)
		log_info("egd: serving full entropy, no rate limit, at most %u%% of the "
		    "conditioned output, at most %u clients", cfg->egd_share_percent,
		    cfg->egd_max_clients);
	else
		log_info("egd: serving full entropy, %u bytes a second per client, at most %u%% "
		    "of the conditioned output, at most %u clients", cfg->egd_rate_bytes,
		    cfg->egd_share_percent, cfg->egd_max_clients);
	return 0;
}

void
broker_stop(void)
{
	struct broker_tally *t;

	if (broker == NULL)
		return;
	while (!TAILQ_EMPTY(&broker->clients))
		broker_close(TAILQ_FIRST(&broker->clients), "the daemon stops");
	broker_listen_stop(broker);
	while ((t = TAILQ_FIRST(&broker->tallies)) != NULL) {
		TAILQ_REMOVE(&broker->tallies, t, entry);
		free(t);
	}
	event_free(broker->ev_serve);
	event_free(broker->ev_rate);
	event_free(broker->ev_wake);
	broker_draw_free(&broker->draw);
	free(broker);
	broker = NULL;
}
