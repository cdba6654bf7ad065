/* version.h - the one version number of gpurec: the programs print it and
 * the packages (make deb / make rpm) take theirs from it. */
#ifndef GR_COMMON_VERSION_H
#define GR_COMMON_VERSION_H

#define GPUREC_VERSION "0.1.0"

#endif
