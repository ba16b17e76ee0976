/* SPDX-License-Identifier: MIT */
/*
 * main(): parse the flags, load the modules, open the sink and the pidfile,
 * daemonise, split off the feeder for the kernel sink, and run the worker's
 * engine with the parts above it (control server, plugin hosts, privileges).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "capture.h"
#include "control.h"
#include "daemonize.h"
#include "engine.h"
#include "loader.h"
#include "log.h"
#include "notify.h"
#include "options.h"
#include "pidfile.h"
#include "privdrop.h"
#include "privsep.h"
#include "hostproc.h"
#include "registry.h"
#include "sink.h"
#include "vmgenid.h"

/* The worker's loop serves the plugin hosts and the control server. */
static int
entropyd_start(struct event_base *base, const struct config *cfg, struct sink *sink)
{
	int rc;

	hostproc_attach(base);
	if ((rc = control_start(base, cfg, sink)) != 0)
		hostproc_detach();
	return rc;
}

/* The loop ended: stop serving. */
static void
entropyd_stop(void)
{
	control_stop();
	hostproc_detach();
}

/* SIGHUP: drop-ins added since. */
static void
entropyd_reload(const struct config *cfg)
{
	loader_reload(cfg);
}

/* What the worker's engine is given of the folders above it. */
static const struct engine_parts entropyd_parts = {
	.start = entropyd_start,
	.stop = entropyd_stop,
	.reload = entropyd_reload,
	.setup = privsep_worker_setup,
	.ready = privsep_worker_ready,
};

/*
 * A start that fails: say why in one line on stderr and, under systemd,
 * as STATUS= with ERRNO= (errnum, or EINVAL when none applies), so the
 * unit fails at once with the reason. Returns rc.
 */
static int
entropyd_failed(int rc, int errnum, const char *why)
{
	fprintf(stderr, "entropyd: %s\n", why);
	notify_send("STATUS=entropyd: %s\nERRNO=%d", why, errnum > 0 ? errnum : EINVAL);
	notify_close();
	return rc;
}

/* Report a usage error in one line, and exit 64. */
static void __attribute__((noreturn))
usage_error(const char *msg)
{
	exit(entropyd_failed(EX_USAGE, EINVAL, msg));
}

int
main(int argc, char **argv)
{
	struct config cfg;
	struct sink sink;
	struct pidfile pidfile = { NULL, -1 };
	const char *pidpath;
	char err[512];
	int rc, errnum = 0;

	/* First: a start that fails from here on tells systemd why. */
	notify_init();
	if (options_parse(&cfg, argc, argv, err, sizeof err) != 0)
		usage_error(err);
	if (cfg.help) {
		options_usage(stdout);
		options_free(&cfg);
		return EX_OK;
	}
	if (cfg.version) {
		printf("entropyd %s (source ABI %d.%d)\n", PACKAGE_VERSION,
		    ENTROPYD_SOURCE_ABI_MAJOR, ENTROPYD_SOURCE_ABI_MINOR);
		options_free(&cfg);
		return EX_OK;
	}
	log_init("entropyd", LOG_TO_STDERR, cfg.verbose);
	/* Before plugins load: their hosts take the -D user and group. */
	if (cfg.drop_privileges != NULL &&
	    (rc = privdrop_prepare(cfg.drop_privileges, err, sizeof err)) != 0) {
		options_free(&cfg);
		return entropyd_failed(rc, ESRCH, err);
	}
	registry_add_builtins();
	loader_load_dir(cfg.plugin_dir);
	if (registry_configure(&cfg, loader_init_failed, err, sizeof err) != 0)
		usage_error(err);
	if (cfg.show_options != NULL) {
		registry_print_options(registry_find(cfg.show_options), stdout);
		rc = EX_OK;
		goto out;
	}
	if (cfg.list) {
		registry_print_list(stdout);
		loader_print_list(cfg.plugin_dir, stdout);
		vmgenid_print(stdout);
		rc = EX_OK;
		goto out;
	}
	/* A device named on the command line must be there (unless --wait-for-device). */
	if ((rc = options_check_devices(&cfg, &errnum, err, sizeof err)) != 0) {
		entropyd_failed(rc, errnum, err);
		goto out;
	}
	/* Before any thread starts: these are per thread, inherited by new ones. */
	if (cfg.drop_privileges != NULL)
		privdrop_bound();
	if ((rc = capture_start(&cfg, err, sizeof err)) != 0) {
		entropyd_failed(rc, errno, err);
		goto out;
	}
	if ((rc = sink_open(&sink, &cfg, err, sizeof err)) != 0) {
		entropyd_failed(rc, errno, err);
		goto out_sink;
	}
	pidpath = cfg.pid_file != NULL ? cfg.pid_file :
	    cfg.foreground ? NULL : OPTIONS_DEFAULT_PIDFILE;
	if (pidpath != NULL && (rc = pidfile_open(&pidfile, pidpath, err, sizeof err)) != 0) {
		entropyd_failed(rc, errno, err);
		goto out_sink;
	}
	if (!cfg.foreground) {
		if (daemonize_start() == -1) {
			snprintf(err, sizeof err, "daemonize: %s", strerror(errno));
			rc = entropyd_failed(EX_OSERR, errno, err);
			goto out_sink;
		}
		log_init("entropyd", LOG_TO_SYSLOG, cfg.verbose);
	}
	if (pidfile.fd != -1 && pidfile_write(&pidfile) == -1) {
		log_warn("pidfile %s: cannot write it", pidpath);
		rc = EX_CANTCREAT;
		notify_close();
		goto out_sink;
	}
	log_info("entropyd %s started; sink %s (%s)", PACKAGE_VERSION, sink.path,
	    sink_kind_name(sink.kind));
	/* The kernel sink: a privileged feeder, and from here on a worker without privilege. */
	if (sink.kind == SINK_KERNEL)
		privsep_split(&sink, &pidfile, &cfg);
	rc = engine_run(&cfg, &sink, &entropyd_parts);
	privsep_worker_end(&sink);
	notify_close();
out_sink:
	sink_close(&sink);
	pidfile_close(&pidfile);
out:
	registry_free();
	loader_free();
	options_free(&cfg);
	return rc;
}
