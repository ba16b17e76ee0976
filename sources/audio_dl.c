/* SPDX-License-Identifier: MIT */
/*
 * The ALSA functions the audio source calls, loaded from libasound on first
 * use: the audio source is off by default, and a daemon without it need not
 * map libasound (a fair part of its memory).  The prototypes come from
 * ALSA's own header, so a mismatch does not compile.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include <alsa/asoundlib.h>

#include "lazylib.h"

#define AUDIO_DL_FAIL (-ELIBACC)	/* what a call returns without libasound */

static struct lazylib audio_dl = LAZYLIB_INIT("libasound.so.2");

/* ALSA's message for an error, or why libasound could not be loaded. */
const char *
snd_strerror(int errnum)
{
	LAZYLIB_GET(&audio_dl, const char *, snd_strerror, (int),
	    return errnum == AUDIO_DL_FAIL ? lazylib_error(&audio_dl) :
	    strerror(errnum < 0 ? -errnum : errnum))
	return f(errnum);
}

LAZYLIB_FN(&audio_dl, int, snd_lib_error_set_handler,
    (snd_lib_error_handler_t handler), (handler), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_open,
    (snd_pcm_t **pcm, const char *name, snd_pcm_stream_t stream, int mode),
    (pcm, name, stream, mode), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_close, (snd_pcm_t *pcm), (pcm),
    AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, const char *, snd_pcm_format_name,
    (const snd_pcm_format_t format), (format), "unknown")
LAZYLIB_FN(&audio_dl, size_t, snd_pcm_hw_params_sizeof, (void), (), 0)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params,
    (snd_pcm_t *pcm, snd_pcm_hw_params_t *params), (pcm, params),
    AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params_any,
    (snd_pcm_t *pcm, snd_pcm_hw_params_t *params), (pcm, params),
    AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params_get_period_size,
    (const snd_pcm_hw_params_t *params, snd_pcm_uframes_t *frames, int *dir),
    (params, frames, dir), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params_get_sbits,
    (const snd_pcm_hw_params_t *params), (params), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params_set_access,
    (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, snd_pcm_access_t access),
    (pcm, params, access), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params_set_buffer_size_near,
    (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, snd_pcm_uframes_t *val),
    (pcm, params, val), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params_set_channels_first,
    (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, unsigned int *val),
    (pcm, params, val), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params_set_format,
    (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, snd_pcm_format_t val),
    (pcm, params, val), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params_set_period_size_near,
    (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, snd_pcm_uframes_t *val,
    int *dir), (pcm, params, val, dir), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params_set_rate_near,
    (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, unsigned int *val,
    int *dir), (pcm, params, val, dir), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params_set_rate_resample,
    (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, unsigned int val),
    (pcm, params, val), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_hw_params_test_format,
    (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, snd_pcm_format_t val),
    (pcm, params, val), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_poll_descriptors,
    (snd_pcm_t *pcm, struct pollfd *pfds, unsigned int space),
    (pcm, pfds, space), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_poll_descriptors_count, (snd_pcm_t *pcm),
    (pcm), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_poll_descriptors_revents,
    (snd_pcm_t *pcm, struct pollfd *pfds, unsigned int nfds,
    unsigned short *revents), (pcm, pfds, nfds, revents), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_prepare, (snd_pcm_t *pcm), (pcm),
    AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, snd_pcm_sframes_t, snd_pcm_readi,
    (snd_pcm_t *pcm, void *buffer, snd_pcm_uframes_t size),
    (pcm, buffer, size), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_recover, (snd_pcm_t *pcm, int err,
    int silent), (pcm, err, silent), AUDIO_DL_FAIL)
LAZYLIB_FN(&audio_dl, int, snd_pcm_start, (snd_pcm_t *pcm), (pcm),
    AUDIO_DL_FAIL)
