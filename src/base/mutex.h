// The annotated mutex lives with the public headers (ifcore/frame.h's queues use it).
#pragma once

#include "ifcore/mutex.h"
