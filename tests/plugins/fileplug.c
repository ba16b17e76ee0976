/* SPDX-License-Identifier: MIT */
/*
 * The built-in file source (sources/file.c, compiled unchanged) as a drop-in
 * named "fileplug", so make bench can put the same module's read() through
 * a plugin host and compare it with the module alone.
 */
#include "file.c"

static struct entropyd_source fileplug_source;

const struct entropyd_source *
entropyd_source_entry(void)
{
	fileplug_source = file_source;
	fileplug_source.name = "fileplug";
	fileplug_source.description = "the file source, as a drop-in (make bench)";
	return &fileplug_source;
}
