#include "ui_format.h"

#include <QObject>

#include <QLocale>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>

#include "io/presets.h"
#include "report/plan_text.h"
#include "sim/deployment.h"

namespace shardlab::ui {

namespace {
const QString kMissing = QStringLiteral("—");
} // namespace

bool isPlottable(double v) { return isShownFigure(v); }

double plotSafe(double v) { return isPlottable(v) ? v : 0.0; }

QString formatNumber(double v, int decimals)
{
    if (!isPlottable(v))
        return kMissing;
    return QLocale().toString(v, 'f', decimals);
}

QString formatCapacityGb(double gb)
{
    if (!isPlottable(gb))
        return kMissing;
    return QLocale().toString(gb, 'g', QLocale::FloatingPointShortest);
}

QString formatMs(double ms)
{
    if (!isPlottable(ms))
        return kMissing;
    const double a = std::fabs(ms);
    if (a == 0)
        return QStringLiteral("0");
    if (a < 0.1)
        return formatNumber(ms, 3);
    if (a < 100)
        return formatNumber(ms, 2);
    if (a < 1000)
        return formatNumber(ms, 1);
    return formatNumber(ms, 0);
}

QString formatBytes(double bytes)
{
    if (!isPlottable(bytes))
        return kMissing;
    const double a = std::fabs(bytes);
    if (a >= 1e9)
        return formatNumber(bytes / 1e9, 2) + QStringLiteral(" GB");
    if (a >= 1e6)
        return formatNumber(bytes / 1e6, 2) + QStringLiteral(" MB");
    if (a >= 1e3)
        return formatNumber(bytes / 1e3, 1) + QStringLiteral(" KB");
    return formatNumber(bytes, 0) + QStringLiteral(" B");
}

QString formatParams(double count)
{
    if (!isPlottable(count))
        return kMissing;
    if (count >= 1e12)
        return formatNumber(count / 1e12, 2) + QStringLiteral(" T");
    if (count >= 1e9)
        return formatNumber(count / 1e9, 2) + QStringLiteral(" B");
    return formatNumber(count / 1e6, 1) + QStringLiteral(" M");
}

QString formatPercent(double fraction)
{
    if (!isPlottable(fraction))
        return kMissing;
    return formatNumber(fraction * 100.0, 1) + QStringLiteral(" %");
}

QString formatSigned(double v, int decimals)
{
    if (!isPlottable(v))
        return kMissing;
    const QString body = QLocale().toString(std::fabs(v), 'f', decimals);
    if (body == QLocale().toString(0.0, 'f', decimals))
        return body;
    return (v < 0 ? QStringLiteral("−") : QStringLiteral("+")) + body;
}

QString plainNumbers(const QString& text)
{
    static const QRegularExpression sci(QStringLiteral("(?<![\\w.])(-?\\d+(?:\\.\\d+)?)[eE]([+-]?\\d+)(?![\\w.])"));
    QString out;
    qsizetype last = 0;
    auto it = sci.globalMatch(text);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        const double v = m.captured(0).toDouble();
        QString plain;
        if (std::isfinite(v) && std::fabs(v) < 1e15 && (v == 0 || std::fabs(v) >= 1e-9)) {
            // Enough decimals to keep the value's significant digits, none when whole.
            int decimals = 0;
            if (v != std::floor(v))
                decimals = std::clamp(int(std::ceil(-std::log10(std::fabs(v)))) + 3, 0, 12);
            plain = QLocale().toString(v, 'f', decimals);
            if (decimals > 0) {
                while (plain.endsWith(QLatin1Char('0')))
                    plain.chop(1);
                if (plain.endsWith(QLocale().decimalPoint()))
                    plain.chop(1);
            }
        } else {
            plain = m.captured(0);
        }
        out += text.mid(last, m.capturedStart() - last) + plain;
        last = m.capturedEnd();
    }
    out += text.mid(last);
    return out;
}

QString planDegrees(const Scenario& s, const Plan& p)
{
    return QString::fromStdString(planDegreesText(s, p));
}

QString deploymentDegrees(const ModelSpec& m, const Deployment& d)
{
    return QString::fromStdString(deploymentDegreesText(m, d, false, "\n")).toHtmlEscaped().replace(
        QLatin1Char('\n'), QStringLiteral("<br>"));
}

QString objectiveAxisLabel(ServingMode m)
{
    switch (m) {
    case ServingMode::Decode:
        return QObject::tr("decode tok/s per GPU");
    case ServingMode::Disaggregated:
        return QObject::tr("tok/s per GPU, 2 pools"); // short: a long vertical label sets the curve's least height
    default:
        return QObject::tr("output tok/s per GPU");
    }
}

QString servingDescription(ServingMode m)
{
    switch (m) {
    case ServingMode::Decode:
        return QObject::tr("decode only, prefill left out");
    case ServingMode::Disaggregated:
        return QObject::tr("disaggregated serving, per GPU of both pools");
    default:
        return QObject::tr("aggregated serving, prefill included");
    }
}

QString shownName(const QString& name, int maxChars)
{
    if (name.size() <= maxChars)
        return name;
    int head = (maxChars - 1) / 2, tail = maxChars - 1 - head;
    // Never cut a surrogate pair in half.
    if (head > 0 && name.at(head - 1).isHighSurrogate())
        --head;
    if (tail > 0 && name.at(name.size() - tail).isLowSurrogate())
        --tail;
    return name.left(head) + QChar(0x2026) + name.right(tail);
}

QString shownName(const std::string& name, int maxChars) { return shownName(QString::fromStdString(name), maxChars); }

QString scenarioTitle(const Scenario& s) { return shownName(shownScenarioName(s)); }

QString scenarioCaption(const Scenario& s)
{
    return QObject::tr("Scenario %1: %2 on %3 GPUs (%4)")
        .arg(scenarioTitle(s), shownName(s.model.name))
        .arg(s.cluster.totalGpus())
        .arg(shownName(s.cluster.name));
}

void copyNames(const Scenario& from, Scenario& to)
{
    to.name = from.name;
    to.description = from.description;
    to.model.name = from.model.name;
    to.cluster.name = from.cluster.name;
    to.cluster.gpu.name = from.cluster.gpu.name;
}

} // namespace shardlab::ui
