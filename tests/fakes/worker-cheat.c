/* SPDX-License-Identifier: MIT */
/*
 * A compromised worker, for tests/integration/ops-privsep.sh: preloaded into
 * the daemon (LD_PRELOAD), it rewrites one ADD frame the worker sends its
 * feeder so that its first segment claims 9 bits of credit per byte, as code
 * that took over the worker could. Which ADD, counted over every process of
 * the daemon: the ENTROPYD_TEST_CHEAT_ADD-th (1 = the first). The count lives
 * in memory the daemon's processes share from before they fork, so only the
 * first worker cheats and the one the feeder starts after killing it does not.
 */
#include <sys/mman.h>
#include <sys/socket.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * An ADD frame: u16 type 2, u16 0, u32 payload length, u32 segments, u32 0;
 * then each segment: u32 length, u32 credit in bits, the bytes.
 */
#define CHEAT_ADD 2
#define CHEAT_HEADER_BYTES 16
#define CHEAT_SEGMENT_BYTES 8
#define CHEAT_MAX_FRAME (CHEAT_HEADER_BYTES + 4096)

static unsigned long *cheat_count; /* ADD frames seen, shared across fork */
static unsigned long cheat_at;     /* the ADD frame to rewrite; 0: none */

/* Map the shared count before the daemon forks or confines itself. */
__attribute__((constructor)) static void
cheat_init(void)
{
	const char *at = getenv("ENTROPYD_TEST_CHEAT_ADD");
	void *p;

	if (at == NULL || (cheat_at = strtoul(at, NULL, 10)) == 0)
		return;
	p = mmap(NULL, sizeof *cheat_count, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0);
	cheat_count = p == MAP_FAILED ? NULL : p;
}

/* send(2), with the chosen ADD frame's first segment raised to 9 bits a byte. */
ssize_t
send(int fd, const void *buf, size_t len, int flags)
{
	static ssize_t (*real)(int, const void *, size_t, int);
	uint8_t frame[CHEAT_MAX_FRAME];
	const uint8_t *b = buf;
	uint32_t seglen, credit;

	if (real == NULL)
		real = (ssize_t (*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
	if (cheat_count == NULL || len < CHEAT_HEADER_BYTES + CHEAT_SEGMENT_BYTES ||
	    len > sizeof frame ||
	    (b[0] | b[1] << 8) != CHEAT_ADD ||
	    __atomic_add_fetch(cheat_count, 1, __ATOMIC_SEQ_CST) != cheat_at)
		return real(fd, buf, len, flags);
	memcpy(frame, buf, len);
	seglen = (uint32_t)frame[16] | (uint32_t)frame[17] << 8 | (uint32_t)frame[18] << 16 |
	    (uint32_t)frame[19] << 24;
	credit = 9 * seglen;
	frame[20] = (uint8_t)credit;
	frame[21] = (uint8_t)(credit >> 8);
	frame[22] = (uint8_t)(credit >> 16);
	frame[23] = (uint8_t)(credit >> 24);
	return real(fd, frame, len, flags);
}
