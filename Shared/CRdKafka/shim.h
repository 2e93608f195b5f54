#pragma once
#include <librdkafka/rdkafka.h>
