// The runs as a file: SearchPanel's runs written to and read from the session's runs
// file (format "shardlab-runs", version 1; docs/window.md gives the schema). What is read
// back is checked again, as any input is: plans against their own scenario, curve points
// within range, names by the core's rule, at most kMaxRestoredRuns runs.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <optional>

#include "io/scenario_json.h"
#include "model/names.h"
#include "qcp.h"
#include "search_panel.h"
#include "sim/simulator.h"

namespace shardlab::ui {

namespace {

constexpr int kRunsVersion = 1;

// Scenarios and plans are embedded as JSON objects (the core's own JSON, re-read by the
// core's parsers); a string holding that JSON is read too.
QJsonObject jsonObject(const std::string& json)
{
    return QJsonDocument::fromJson(QByteArray::fromStdString(json)).object();
}

std::string jsonText(const QJsonValue& v)
{
    if (v.isObject())
        return QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact).toStdString();
    return v.toString().toStdString();
}

} // namespace

QByteArray SearchPanel::runsToJson() const
{
    QJsonArray runs;
    // The newest runs only: the file is rewritten once a second while a search runs, so it
    // stays small (a run with its scenario and elites is ~20-30 KB).
    constexpr int kKeptRuns = 30;
    for (int i = std::max(0, runCount() - kKeptRuns); i < runCount(); ++i) {
        const Run& r = m_runs[i];
        QJsonObject o;
        o[QStringLiteral("name")] = r.label;
        o[QStringLiteral("variant")] = r.variant;
        o[QStringLiteral("variant_note")] = r.variantNote;
        // A run in progress is written as what the file is read as: a run that was cut
        // off, with its curve so far and no result.
        const bool running = m_running && i == runCount() - 1;
        o[QStringLiteral("status")] = running ? tr("interrupted") : r.status;
        o[QStringLiteral("visible")] = r.visible;
        o[QStringLiteral("color")] = r.color.name(QColor::HexRgb);
        o[QStringLiteral("scenario")] = jsonObject(scenarioToJson(r.scenario));
        o[QStringLiteral("found")] = r.found && !running;
        if (r.found && !running)
            o[QStringLiteral("best")] = jsonObject(planToJson(r.best_));
        if (r.found && !running && r.prefill)
            o[QStringLiteral("prefill_best")] = jsonObject(planToJson(*r.prefill));
        o[QStringLiteral("best_value")] = r.bestValue;
        o[QStringLiteral("calls")] = r.calls;
        QJsonArray curve;
        for (auto it = r.best->data()->constBegin(); it != r.best->data()->constEnd(); ++it)
            curve.append(QJsonArray{it->key, it->value});
        o[QStringLiteral("curve")] = curve;
        QJsonArray elites;
        for (const EliteEntry& e : r.elites)
            elites.append(QJsonObject{{QStringLiteral("plan"), jsonObject(planToJson(e.plan))},
                                      {QStringLiteral("call"), e.call},
                                      {QStringLiteral("valid"), e.valid},
                                      {QStringLiteral("tokens_per_s_per_gpu"), e.tokensPerSPerGpu},
                                      {QStringLiteral("tpot_ms"), e.tpotMs},
                                      {QStringLiteral("ttft_ms"), e.ttftMs},
                                      {QStringLiteral("memory_gb"), e.memoryGb},
                                      {QStringLiteral("refinement"), e.refinement}});
        o[QStringLiteral("elites")] = elites;
        runs.append(o);
    }
    return QJsonDocument(QJsonObject{{QStringLiteral("format"), QStringLiteral("shardlab-runs")},
                                     {QStringLiteral("version"), kRunsVersion},
                                     {QStringLiteral("runs"), runs}})
        .toJson(QJsonDocument::Compact);
}

void SearchPanel::restoreRun(const QJsonObject& o, const Scenario& s)
{
    // Plans are re-checked against the run's own scenario: a settings file is not trusted.
    const bool pools = s.workload.serving == ServingMode::Disaggregated;
    std::optional<Simulator> sim;
    if (!pools)
        sim.emplace(s);
    auto valid = [&](const Plan& p) { return pools ? validatePlanShape(p).empty() : sim->evaluate(p).valid; };
    // Its colour as saved; a file from before runs kept theirs (no "color") gets the next one.
    const QColor saved = QColor::fromString(o.value(QStringLiteral("color")).toString());
    Run& run = newRun(o.value(QStringLiteral("name")).toString(), o.value(QStringLiteral("variant")).toString(),
                      o.value(QStringLiteral("variant_note")).toString(), s,
                      saved.isValid() && saved.alpha() == 255 ? saved : QColor());
    run.samples->setVisible(false);
    run.status = o.value(QStringLiteral("status")).toString();
    run.calls = o.value(QStringLiteral("calls")).toInt();
    run.bestValue = o.value(QStringLiteral("best_value")).toDouble();
    if (o.value(QStringLiteral("found")).toBool()) {
        Parsed<Plan> p = parsePlan(jsonText(o.value(QStringLiteral("best"))), "(saved run)");
        run.found = p.ok() && valid(p.value) && run.bestValue > 0 && run.bestValue <= 1e7;
        run.best_ = p.value;
        if (o.contains(QStringLiteral("prefill_best"))) {
            Parsed<Plan> pre =
                parsePlan(jsonText(o.value(QStringLiteral("prefill_best"))), "(saved run)");
            run.found = run.found && pre.ok();
            run.prefill = pre.value;
        }
    }
    for (const QJsonValue& pt : o.value(QStringLiteral("curve")).toArray()) {
        const QJsonArray a = pt.toArray();
        // Throughput per GPU in (0, 1e7] tokens/s at a call count in [0, 1e9]: anything else
        // is damage, and one 1e308 would leave the plot's range empty.
        const double call = a.size() == 2 ? a[0].toDouble() : -1, value = a.size() == 2 ? a[1].toDouble() : -1;
        if (call >= 0 && call <= 1e9 && value > 0 && value <= 1e7) {
            run.best->addData(a[0].toDouble(), a[1].toDouble());
            m_maxValue = std::max(m_maxValue, a[1].toDouble());
            m_maxCalls = std::max(m_maxCalls, int(a[0].toDouble()));
        }
    }
    for (const QJsonValue& ev : o.value(QStringLiteral("elites")).toArray()) {
        const QJsonObject e = ev.toObject();
        Parsed<Plan> p = parsePlan(jsonText(e.value(QStringLiteral("plan"))), "(saved run)");
        if (!p.ok())
            continue;
        EliteEntry entry;
        entry.plan = p.value;
        entry.call = e.value(QStringLiteral("call")).toInt();
        entry.valid = e.value(QStringLiteral("valid")).toBool() && valid(p.value);
        entry.tokensPerSPerGpu = e.value(QStringLiteral("tokens_per_s_per_gpu")).toDouble();
        entry.tpotMs = e.value(QStringLiteral("tpot_ms")).toDouble();
        entry.ttftMs = e.value(QStringLiteral("ttft_ms")).toDouble();
        entry.memoryGb = e.value(QStringLiteral("memory_gb")).toDouble();
        entry.refinement = e.value(QStringLiteral("refinement")).toBool(); // absent in older files: false
        run.elites.push_back(entry);
    }
    run.best->setName(legendName(run));
    applyVisibility(runCount() - 1, o.value(QStringLiteral("visible")).toBool(true));
}

bool SearchPanel::restoreRuns(const QByteArray& json)
{
    m_restoreNote.clear();
    const QJsonDocument doc = QJsonDocument::fromJson(json);
    // Another format, or another version of this one (a newer ShardLab's): not guessed at.
    if (!doc.isObject() || doc.object().value(QStringLiteral("format")).toString() != QLatin1String("shardlab-runs")
        || doc.object().value(QStringLiteral("version")).toInt() != kRunsVersion)
        return false;
    const QJsonArray runs = doc.object().value(QStringLiteral("runs")).toArray();
    // The newest kMaxRestoredRuns; each restored in constant work (the table is filled once).
    const qsizetype first = std::max<qsizetype>(0, runs.size() - kMaxRestoredRuns);
    int unreadable = 0;
    bool any = false;
    for (qsizetype k = first; k < runs.size(); ++k) {
        const QJsonObject o = runs[k].toObject();
        Parsed<Scenario> sc = parseScenario(jsonText(o.value(QStringLiteral("scenario"))), "(saved run)");
        // A scenario this version cannot read, or an absurd name (a damaged or hostile
        // settings file): dropped, not guessed.
        if (!sc.ok() || nameProblem(o.value(QStringLiteral("name")).toString().toStdString())
            || nameProblem(o.value(QStringLiteral("variant")).toString().toStdString())) {
            ++unreadable;
            continue;
        }
        restoreRun(o, sc.value);
        any = true;
    }
    if (first > 0)
        m_restoreNote = tr("%1 older runs not restored (at most %2 are kept)").arg(first).arg(kMaxRestoredRuns);
    if (unreadable > 0)
        m_restoreNote += (m_restoreNote.isEmpty() ? QString() : QStringLiteral("; "))
            + tr("%1 damaged runs dropped").arg(unreadable);
    if (!any)
        return !doc.object().value(QStringLiteral("runs")).toArray().isEmpty() ? false : true;
    // Select the newest run's elites without runSelected: at start-up the plan view and the
    // message line keep what the scenario restore put there.
    m_selected = runCount() - 1;
    fillRunsTable();
    showRunElites(m_selected);
    scheduleReplot();
    Q_EMIT runsChanged();
    return true;
}

} // namespace shardlab::ui
