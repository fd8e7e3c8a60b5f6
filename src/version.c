/* SPDX-License-Identifier: Apache-2.0 */
#include "cuzk/version.h"

const char *cuzk_version(void) { return CUZK_VERSION; }
