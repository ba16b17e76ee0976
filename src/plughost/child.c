/* SPDX-License-Identifier: MIT */
/*
 * The plugin host's life: load the plugin from the file the launcher
 * handed over, report its descriptor, serve the daemon's calls (configure,
 * probe, open, close, forget, shutdown) on its control socket, and a
 * watchdog that ends the host when a call into the plugin hangs.
 */
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <entropyd/source.h>

#include "child.h"
#include "child_int.h"
#include "clock.h"
#include "confine.h"
#include "msg.h"

struct entropyd_module child_module;
struct entropyd_instance *child_instances;
pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t child_watch_cond = PTHREAD_COND_INITIALIZER;
unsigned child_busy;
static int child_control = -1;
static void *child_handle;
static const char *child_busy_what; /* what the main thread is calling, for the fault */
static uint64_t child_main_since_ns;

/* Send a message on the control socket (any thread: one message is one send). */
void
child_send(struct pluginproto_msg *m)
{
	pluginproto_send(child_control, m, -1, -1);
}

/* Say why the host ends because of its plugin (a PLUGINPROTO_FAULT_* kind), and end it. */
void __attribute__((noreturn))
child_fault_kind(int kind, const char *fmt, ...)
{
	struct pluginproto_msg m;
	uint8_t buf[PLUGINPROTO_STRING_MAX + 64];
	char reason[PLUGINPROTO_STRING_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	pluginproto_begin(&m, buf, sizeof buf, PP_FAULT, 0);
	pluginproto_put_i32(&m, kind);
	pluginproto_put_str(&m, reason);
	child_send(&m);
	_exit(EX_SOFTWARE);
}

#define child_fault(...) child_fault_kind(PLUGINPROTO_FAULT_CALL, __VA_ARGS__)

/* The main thread enters a call into the plugin (the watchdog times it). */
void
child_enter(const char *what)
{
	pthread_mutex_lock(&child_lock);
	child_busy_what = what;
	child_main_since_ns = clock_now_ns();
	child_busy++;
	pthread_cond_signal(&child_watch_cond);
	pthread_mutex_unlock(&child_lock);
}

void
child_leave(void)
{
	pthread_mutex_lock(&child_lock);
	child_main_since_ns = 0;
	child_busy--;
	pthread_mutex_unlock(&child_lock);
}

/*
 * The watchdog: asleep while nothing calls into the plugin; while
 * something does, it looks every half timeout for a call older than the
 * timeout, and ends the host when it finds one.
 */
static void *
child_watchdog(void *unused)
{
	struct entropyd_instance *inst;
	struct timespec until;
	uint64_t now, limit = (uint64_t)PLUGINPROTO_CALL_TIMEOUT_MS * 1000000u;

	pthread_mutex_lock(&child_lock);
	for (;;) {
		while (child_busy == 0)
			pthread_cond_wait(&child_watch_cond, &child_lock);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += PLUGINPROTO_CALL_TIMEOUT_MS / 2000;
		until.tv_nsec += (long)(PLUGINPROTO_CALL_TIMEOUT_MS / 2 % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&child_watch_cond, &child_lock, &until);
		now = clock_now_ns();
		if (child_main_since_ns != 0 && now - child_main_since_ns > limit)
			child_fault("%s() did not return within %u s", child_busy_what,
			    PLUGINPROTO_CALL_TIMEOUT_MS / 1000);
		for (inst = child_instances; inst != NULL; inst = inst->next)
			if (inst->read_since_ns != 0 && now - inst->read_since_ns > limit)
				child_fault("%s() did not return within %u s", inst->call,
				    PLUGINPROTO_CALL_TIMEOUT_MS / 1000);
	}
	return NULL;
}

/* Send the descriptor, field by field (see pluginproto.h). */
static void
child_send_loaded(const struct entropyd_source *src)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	const struct entropyd_option *o;
	struct pluginproto_msg m;
	uint32_t n = 0;

	for (o = src->options; o != NULL && o->key != NULL; o++)
		n++;
	pluginproto_begin(&m, buf, sizeof buf, PP_LOADED, 0);
	pluginproto_put_u32(&m, src->abi_major);
	pluginproto_put_u32(&m, src->abi_minor);
	pluginproto_put_u32(&m, src->size);
	pluginproto_put_u32(&m, src->flags);
	pluginproto_put_f64(&m, src->entropy_bits);
	pluginproto_put_u32(&m, src->sample_bits);
	pluginproto_put_u32(&m, src->configure != NULL);
	pluginproto_put_str(&m, src->name);
	pluginproto_put_str(&m, src->description);
	pluginproto_put_u32(&m, n);
	for (o = src->options; o != NULL && o->key != NULL; o++) {
		pluginproto_put_str(&m, o->key);
		pluginproto_put_str(&m, o->default_value);
		pluginproto_put_str(&m, o->help);
	}
	child_send(&m);
}

/* Say why the plugin is refused; the host then ends. */
static int __attribute__((format(printf, 1, 2)))
child_refuse(const char *fmt, ...)
{
	char line[PLUGINPROTO_STRING_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	table_send_line(PP_REFUSED, line);
	return EX_OK;
}

/* dlerror() without the file name it starts with. */
static const char *
child_dlerror(const char *path)
{
	const char *e = dlerror();
	size_t len = strlen(path);

	if (e == NULL)
		return "unknown error";
	if (strncmp(e, path, len) == 0 && strncmp(e + len, ": ", 2) == 0)
		return e + len + 2;
	return e;
}

/* Load the plugin from its file descriptor and check its descriptor; -1 once refused. */
static int
child_load(int file)
{
	const struct entropyd_source *(*entry)(void);
	const struct entropyd_source *src;
	const struct entropyd_option *o;
	char path[64];

	snprintf(path, sizeof path, "/proc/self/fd/%d", file);
	if ((child_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
		return child_refuse("cannot load: %s (a plugin must use only the host table, "
		    "not the daemon's own symbols, and its libraries must be installed)",
		    child_dlerror(path)), -1;
	close(file);
	dlerror();
	*(void **)&entry = dlsym(child_handle, ENTROPYD_SOURCE_ENTRY);
	if (entry == NULL)
		return child_refuse("no %s symbol (is it exported?)", ENTROPYD_SOURCE_ENTRY), -1;
	if ((src = entry()) == NULL)
		return child_refuse("%s() returned no descriptor", ENTROPYD_SOURCE_ENTRY), -1;
	if (src->abi_major != ENTROPYD_SOURCE_ABI_MAJOR)
		return child_refuse("wrong ABI major: built for %u.%u, this daemon speaks %d.%d",
		    src->abi_major, src->abi_minor, ENTROPYD_SOURCE_ABI_MAJOR,
		    ENTROPYD_SOURCE_ABI_MINOR), -1;
	if (src->abi_minor > ENTROPYD_SOURCE_ABI_MINOR)
		return child_refuse("newer ABI minor: built for %u.%u, this daemon speaks %d.%d",
		    src->abi_major, src->abi_minor, ENTROPYD_SOURCE_ABI_MAJOR,
		    ENTROPYD_SOURCE_ABI_MINOR), -1;
	if (src->size < PLUGINPROTO_MIN_SOURCE_SIZE)
		return child_refuse("descriptor too small: size %u, ABI %d.0 needs at least %zu",
		    src->size, ENTROPYD_SOURCE_ABI_MAJOR, PLUGINPROTO_MIN_SOURCE_SIZE), -1;
	if (src->probe == NULL || src->open == NULL || src->read == NULL ||
	    src->pollfd == NULL || src->close == NULL)
		return child_refuse("descriptor lacks one of probe, open, read, pollfd, close"), -1;
	if (src->name == NULL)
		return child_refuse("invalid source name"), -1;
	child_module.src = src;
	for (o = src->options; o != NULL && o->key != NULL; o++)
		child_module.n_options++;
	if (child_module.n_options > PLUGINPROTO_MAX_OPTIONS)
		return child_refuse("more than %d options", PLUGINPROTO_MAX_OPTIONS), -1;
	child_module.values = calloc(child_module.n_options + 1, sizeof *child_module.values);
	child_module.estimate = src->entropy_bits;
	child_send_loaded(src);
	return 0;
}

/* PP_OPTIONS: the estimate in force and each option's value. */
static bool
child_set_options(struct pluginproto_msg *m)
{
	char value[PLUGINPROTO_STRING_MAX + 1];
	uint32_t n, i;
	bool present;

	if (!pluginproto_get_f64(m, &child_module.estimate) || !pluginproto_get_u32(m, &n) ||
	    n != child_module.n_options)
		return false;
	for (i = 0; i < n; i++) {
		if (!pluginproto_get_str(m, value, sizeof value, &present))
			return false;
		free(child_module.values[i]);
		child_module.values[i] = present ? strdup(value) : NULL;
	}
	return pluginproto_done(m);
}

/* Answer a call with an int (and for configure, a reason). */
static void
child_reply(uint16_t type, int rc, const char *err)
{
	struct pluginproto_msg m;
	uint8_t buf[PLUGINPROTO_STRING_MAX + 64];

	pluginproto_begin(&m, buf, sizeof buf, type, 0);
	pluginproto_put_i32(&m, rc);
	if (type == PP_CONFIGURED)
		pluginproto_put_str(&m, err);
	child_send(&m);
}

/* Close every instance, let the module shut down, free everything, and unload. */
static void
child_shutdown(void)
{
	const struct entropyd_source *src = child_module.src;
	struct entropyd_instance *inst;
	size_t i;

	while ((inst = child_instances) != NULL) {
		instance_close(inst);
		table_free_instance(inst);
	}
	if (src != NULL && src->size >= offsetof(struct entropyd_source, shutdown) +
	    sizeof src->shutdown && src->shutdown != NULL) {
		child_enter("shutdown");
		src->shutdown(&child_module);
		child_leave();
	}
	for (i = 0; i < child_module.n_options; i++)
		free(child_module.values[i]);
	free(child_module.values);
	child_module.values = NULL;
	table_drop_deferred();
	if (child_handle != NULL)
		dlclose(child_handle);
}

/* One message from the daemon; false when the host should end. */
static bool
child_serve(void)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	struct pluginproto_msg m;
	char err[512];
	int fds[2], rc;
	ssize_t n;

	n = pluginproto_recv(child_control, buf, sizeof buf, MSG_DONTWAIT, fds);
	if (n == -1 && errno == EAGAIN)
		return true;
	if (n <= 0 || !pluginproto_open(&m, buf, (size_t)n)) {
		if (fds[0] >= 0)
			close(fds[0]);
		return false;
	}
	switch (pluginproto_header(&m)->type) {
	case PP_OPTIONS:
		if (!child_set_options(&m))
			return false;
		break;
	case PP_CONFIGURE:
		err[0] = '\0';
		rc = 0;
		if (child_module.src->configure != NULL) {
			child_enter("configure");
			rc = child_module.src->configure(&child_module, &hosttable, err, sizeof err);
			child_leave();
		}
		child_reply(PP_CONFIGURED, rc, err);
		break;
	case PP_PROBE:
		child_enter("probe");
		rc = child_module.src->probe(&child_module, &hosttable);
		child_leave();
		child_reply(PP_PROBED, rc, NULL);
		break;
	case PP_OPEN:
		instance_open(pluginproto_header(&m)->id, fds[0]);
		fds[0] = -1;
		break;
	case PP_CLOSE: {
		struct entropyd_instance *inst = instance_find(pluginproto_header(&m)->id);

		if (inst != NULL) {
			instance_close(inst);
			if (inst->removed)
				table_free_instance(inst);
		}
		break;
	}
	case PP_FORGET:
		instance_forget(pluginproto_header(&m)->id, &m);
		break;
	case PP_SHUTDOWN:
		return false;
	}
	msg_close_fds(fds);
	return true;
}

/* The main loop: the daemon's messages, deferred calls, polled instances. */
static void
child_loop(void)
{
	struct pollfd *pfd = NULL;
	struct entropyd_instance **who = NULL, *inst;
	size_t cap = 0, n, i;

	for (;;) {
		n = 0;
		pthread_mutex_lock(&child_lock);
		for (inst = child_instances; inst != NULL; inst = inst->next)
			n += inst->open && !inst->threaded ? 2 : 0;
		if (n + 2 > cap) {
			cap = n + 16;
			pfd = realloc(pfd, cap * sizeof *pfd);
			who = realloc(who, cap * sizeof *who);
			if (pfd == NULL || who == NULL)
				child_fault("out of memory");
		}
		pfd[0] = (struct pollfd){ .fd = child_control, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = table_defer_fd, .events = POLLIN };
		n = 2;
		for (inst = child_instances; inst != NULL; inst = inst->next) {
			if (!inst->open)
				continue;
			if (inst->threaded)
				continue; /* its reader thread takes its wants */
			who[n] = inst;
			pfd[n++] = (struct pollfd){ .fd = inst->data, .events = POLLIN };
			if (inst->fd >= 0 && inst->n_wants > 0 && !inst->ended) {
				who[n] = inst;
				pfd[n++] = (struct pollfd){ .fd = inst->fd, .events = POLLIN };
			}
		}
		pthread_mutex_unlock(&child_lock);
		if (poll(pfd, n, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents & POLLIN)
			table_run_deferred();
		for (i = 2; i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			inst = who[i];
			if (pfd[i].fd == inst->data) {
				/* The daemon closed it: the instance is closing. */
				if (!instance_take_wants(inst) || (pfd[i].revents & (POLLHUP | POLLERR)))
					instance_close(inst);
			} else if (inst->open && inst->n_wants > 0 && !inst->ended)
				instance_read_polled(inst);
			/* Anything above may have closed or freed instances: poll afresh. */
			break;
		}
		if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) && !child_serve())
			break;
	}
	free(pfd);
	free(who);
}

int
child_main(int control, int file, uid_t uid, gid_t gid)
{
	struct sigaction sa;
	pthread_t watchdog;
	char err[256];
	int confined;

	child_control = control;
		signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = instance_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(CHILD_SIGNAL, &sa, NULL);
	if (table_start() == -1)
		return child_refuse("eventfd: %s", strerror(errno)), EX_OSERR;
	if ((confined = confine_apply(uid, gid, err, sizeof err)) == -1)
		return child_refuse("cannot confine the plugin host: %s", err), EX_OSERR;
	if (confined == 1)
		table_module_log(&child_module, ENTROPYD_LOG_WARNING,
		    "under valgrind: the plugin host runs without its seccomp filter");
	if (child_load(file) == -1)
		return EX_OK;
	if ((errno = pthread_create(&watchdog, NULL, child_watchdog, NULL)) != 0)
		child_fault("cannot start the watchdog: %s", strerror(errno));
	pthread_detach(watchdog);
	child_loop();
	child_shutdown();
	return EX_OK;
}
