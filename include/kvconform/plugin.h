// The one header a plug-in author includes: every kind's concept and registration, refusals, profile, CLI.
#pragma once

// Deliberately light: no RapidCheck, no Boost, no Eigen (a test preprocesses it to check).
#include "oracle/numeric/numeric_profile.h"
#include "properties/cli/cli.h"
#include "properties/executor/adapter.h"
#include "properties/kinds/adapters.h"
#include "properties/trace/refusal.h"
