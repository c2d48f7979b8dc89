// The calibration rows as `shardlab-cli calibrate` predicts them (on the h100-8 preset), and
// one row by id, for the tests that check how a published run was rebuilt.
#pragma once

#include <QtTest>

#include <algorithm>
#include <string>
#include <vector>

#include "io/presets.h"
#include "sim/calibration.h"

namespace shardlab::testing {

inline std::vector<CalibrationRow> calibrationRowsOnH100()
{
    const auto cluster = clusterPreset("h100-8");
    if (!cluster.ok())
        return {};
    return runCalibration(cluster.value);
}

// The row with this id; a default row (empty id) when there is none.
inline CalibrationRow calibrationRow(const std::vector<CalibrationRow>& rows, const std::string& id)
{
    const auto it = std::find_if(rows.begin(), rows.end(), [&](const CalibrationRow& r) { return r.c.id == id; });
    return it != rows.end() ? *it : CalibrationRow{};
}

} // namespace shardlab::testing
