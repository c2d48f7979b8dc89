#include "scenario_draft.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>

#include "io/format_json.h"
#include "io/scenario_json.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
// The number at a dotted JSON path ("cluster.gpu.hbm_gb"), if there is one.
bool numberAt(const QJsonObject& root, const QString& path, double& out)
{
    const QStringList parts = path.split(QLatin1Char('.'), Qt::SkipEmptyParts);
    if (parts.isEmpty())
        return false;
    QJsonValue v = root;
    for (const QString& p : parts) {
        if (!v.isObject())
            return false;
        v = v.toObject().value(p);
    }
    if (!v.isDouble())
        return false;
    out = v.toDouble();
    return true;
}

} // namespace

ScenarioLoad readScenarioForEditor(const std::string& text, const std::string& label)
{
    ScenarioLoad out;
    Parsed<Scenario> p = parseScenario(text, label);
    if (p.ok()) {
        out.ok = true;
        out.scenario = p.value;
        return out;
    }
    for (const FieldError& e : p.errors)
        out.errors << plainNumbers(QString::fromStdString(e.toString()));

    // A draft needs a well-formed scenario document: right format, every section there,
    // only values out of range or inconsistent with each other.
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(text));
    if (!doc.isObject() || doc.object().value(QStringLiteral("format")).toString() != QLatin1String(io::formats::kScenarioFormat))
        return out;
    std::vector<std::pair<QString, double>> raw;
    for (const FieldError& e : p.errors) {
        double v = 0;
        if (e.outOfRange && numberAt(doc.object(), QString::fromStdString(e.where), v))
            raw.emplace_back(QString::fromStdString(e.where), v);
        else if (!e.invalidValue)
            return out; // a structural problem (missing field, wrong type, unknown key …)
    }
    out.ok = true;
    out.draft = true;
    out.scenario = p.value;
    out.rawValues = std::move(raw);
    out.problemCount = int(p.errors.size());
    return out;
}

} // namespace shardlab::ui
