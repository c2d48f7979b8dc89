// Fitting the simulator's scalar knobs to a user's own measurements (docs/simulator.md §8,
// "Calibrating from your own runs"): compute, HBM, NVLink and inter-node efficiency and the
// per-kernel floor, shared by every row, by least squares on log(predicted / measured).
#pragma once

#include <string>
#include <vector>

#include "model/plan.h"
#include "model/specs.h"
#include "sim/calibration.h"

namespace shardlab {

struct MeasurementRow {
    std::string label;        // where it came from ("rows[3]", a note)
    Scenario scenario;
    Plan plan;
    CalibrationMetric metric = CalibrationMetric::TpotMs;
    double measured = 0;
    std::vector<std::string> files; // the scenario and plan files the row names (read by path)
};

// The knobs, in the order fitted: names as in cluster files.
struct Knobs {
    double compute = 0, hbm = 0, nvlink = 0, interNode = 0, kernelOverheadUs = 0;
    static const char* name(int i); // "compute", "hbm", "nvlink", "inter_node", "kernel_overhead_us"
    static constexpr int kCount = 5;
    double& at(int i);
    double at(int i) const;
};
Knobs knobsOf(const GpuSpec& g);
void applyKnobs(const Knobs& k, GpuSpec& g);

// The simulator's figure for a row's metric with the given knobs.
double predictMeasurement(const MeasurementRow& row, const Knobs& k);

struct KnobFitResult {
    Knobs before, after;
    bool determined[Knobs::kCount] = {}; // false: the rows do not move the loss with this knob
    bool atBound[Knobs::kCount] = {};    // the fit stopped at the knob's range: the rows ask for more
    std::vector<double> predictedBefore, predictedAfter;
    double rmsLogBefore = 0, rmsLogAfter = 0; // root mean square of log(predicted / measured)
    int sweeps = 0;
};

// Starts from the first row's GPU knobs; deterministic (coordinate descent in log space,
// golden-section line searches within [0.1, 1] for efficiencies and [0, 200] µs for the floor;
// a knob at a bound means the rows ask for something the model lacks).
KnobFitResult fitKnobs(const std::vector<MeasurementRow>& rows);

// Rows no run could have produced: a plan that does not fit in GPU memory on its scenario
// ("rows[i].plan"; SLOs do not matter, a measurement may miss them). Empty: all fine.
FieldErrors checkMeasurementRows(const std::vector<MeasurementRow>& rows);

} // namespace shardlab
