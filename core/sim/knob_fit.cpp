#include "sim/knob_fit.h"

#include <algorithm>
#include <cmath>

#include "sim/simulator.h"

namespace shardlab {

const char* Knobs::name(int i)
{
    static const char* names[kCount] = {"compute", "hbm", "nvlink", "inter_node", "kernel_overhead_us"};
    return i >= 0 && i < kCount ? names[i] : "?";
}

double& Knobs::at(int i)
{
    switch (i) {
    case 0: return compute;
    case 1: return hbm;
    case 2: return nvlink;
    case 3: return interNode;
    default: return kernelOverheadUs;
    }
}

double Knobs::at(int i) const { return const_cast<Knobs*>(this)->at(i); }

Knobs knobsOf(const GpuSpec& g)
{
    return {g.efficiency.compute, g.efficiency.hbm, g.efficiency.nvlink, g.efficiency.interNode, g.kernelOverheadUs};
}

void applyKnobs(const Knobs& k, GpuSpec& g)
{
    g.efficiency = {k.compute, k.hbm, k.nvlink, k.interNode};
    g.kernelOverheadUs = k.kernelOverheadUs;
}

double predictMeasurement(const MeasurementRow& row, const Knobs& k)
{
    Scenario s = row.scenario;
    applyKnobs(k, s.cluster.gpu);
    const SimResult r = Simulator(s).evaluate(row.plan);
    switch (row.metric) {
    case CalibrationMetric::TpotMs: return r.tpotMs;
    case CalibrationMetric::TtftMs: return r.ttftMs;
    default: return r.outputTokensPerS;
    }
}

namespace {

double logError(double predicted, double measured)
{
    if (!(predicted > 0) || !std::isfinite(predicted))
        return 50.0; // a knob value the simulator cannot price: far worse than any fit
    return std::log(predicted / measured);
}

double loss(const std::vector<MeasurementRow>& rows, const Knobs& k)
{
    double sum = 0;
    for (const MeasurementRow& r : rows) {
        const double e = logError(predictMeasurement(r, k), r.measured);
        sum += e * e;
    }
    return sum;
}

// The knob's range, in the space the line search works in: log for efficiencies, linear
// (µs) for the floor, which may be 0.
struct Range {
    double lo, hi;
    bool log;
};
Range rangeOf(int i) { return i == 4 ? Range{0.0, 200.0, false} : Range{std::log(0.1), 0.0, true}; }
double toKnob(const Range& r, double x) { return r.log ? std::exp(x) : x; }

} // namespace

KnobFitResult fitKnobs(const std::vector<MeasurementRow>& rows)
{
    KnobFitResult out;
    if (rows.empty())
        return out;
    out.before = knobsOf(rows.front().scenario.cluster.gpu);
    Knobs k = out.before;
    for (int i = 0; i < Knobs::kCount; ++i) {
        // A knob the rows cannot see (no multi-node row for inter_node) stays as it was.
        Knobs up = k, down = k;
        up.at(i) *= 1.25;
        down.at(i) *= 0.8;
        if (i == 4 && k.at(i) == 0)
            up.at(i) = 5;
        const double l0 = loss(rows, k);
        out.determined[i] = std::abs(loss(rows, up) - l0) > 1e-12 || std::abs(loss(rows, down) - l0) > 1e-12;
    }
    double current = loss(rows, k);
    constexpr double kGolden = 0.6180339887498949;
    auto golden = [&](auto&& f, double a, double b, double& fx) {
        double c = b - kGolden * (b - a), d = a + kGolden * (b - a);
        double fc = f(c), fd = f(d);
        for (int it = 0; it < 40; ++it) {
            if (fc < fd) {
                b = d;
                d = c;
                fd = fc;
                c = b - kGolden * (b - a);
                fc = f(c);
            } else {
                a = c;
                c = d;
                fc = fd;
                d = a + kGolden * (b - a);
                fd = f(d);
            }
        }
        fx = std::min(fc, fd);
        return fc < fd ? c : d;
    };
    auto space = [](const Knobs& v, int i) { const Range r = rangeOf(i); return r.log ? std::log(v.at(i)) : v.at(i); };
    for (out.sweeps = 1; out.sweeps <= 100; ++out.sweeps) {
        const double start = current;
        const Knobs sweepStart = k;
        for (int i = 0; i < Knobs::kCount; ++i) {
            if (!out.determined[i])
                continue;
            const Range r = rangeOf(i);
            auto f = [&](double x) {
                Knobs t = k;
                t.at(i) = toKnob(r, x);
                return loss(rows, t);
            };
            double fx = 0;
            const double x = golden(f, r.lo, r.hi, fx);
            if (fx < current) { // never worse than where the sweep started
                k.at(i) = toKnob(r, x);
                current = fx;
            }
        }
        // Pattern move (Hooke-Jeeves): correlated knobs (HBM and the kernel floor both set a
        // small decode step) make single-knob sweeps zig-zag; go on along the sweep's move.
        auto along = [&](double t) {
            Knobs v = k;
            for (int i = 0; i < Knobs::kCount; ++i) {
                if (!out.determined[i])
                    continue; // as it was, even outside the searched range
                const Range r = rangeOf(i);
                const double x = std::clamp(space(k, i) + t * (space(k, i) - space(sweepStart, i)), r.lo, r.hi);
                v.at(i) = toKnob(r, x);
            }
            return v;
        };
        double fp = 0;
        const double t = golden([&](double tt) { return loss(rows, along(tt)); }, 0.0, 8.0, fp);
        if (fp < current) {
            k = along(t);
            current = fp;
        }
        if (start - current < 1e-14 * std::max(1.0, start))
            break;
    }
    out.after = k;
    for (int i = 0; i < Knobs::kCount; ++i) {
        const Range r = rangeOf(i);
        const double x = r.log ? std::log(k.at(i)) : k.at(i);
        out.atBound[i] = out.determined[i] && (std::abs(x - r.lo) < 1e-6 || std::abs(x - r.hi) < 1e-6);
    }
    double sb = 0, sa = 0;
    for (const MeasurementRow& r : rows) {
        out.predictedBefore.push_back(predictMeasurement(r, out.before));
        out.predictedAfter.push_back(predictMeasurement(r, out.after));
        const double eb = logError(out.predictedBefore.back(), r.measured);
        const double ea = logError(out.predictedAfter.back(), r.measured);
        sb += eb * eb;
        sa += ea * ea;
    }
    out.rmsLogBefore = std::sqrt(sb / rows.size());
    out.rmsLogAfter = std::sqrt(sa / rows.size());
    return out;
}

FieldErrors checkMeasurementRows(const std::vector<MeasurementRow>& rows)
{
    FieldErrors out;
    for (size_t i = 0; i < rows.size(); ++i) {
        const SimResult r = Simulator(rows[i].scenario).evaluate(rows[i].plan);
        if (r.violates(Violation::Memory))
            out.push_back({{}, "rows[" + std::to_string(i) + "].plan",
                           "does not fit in GPU memory on its scenario's cluster (the simulator's check), so no "
                           "run could have used it"});
    }
    return out;
}

} // namespace shardlab
