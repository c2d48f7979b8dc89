#include "plan_explain.h"

namespace shardlab::ui {

namespace {
QString str(const std::string& s) { return QString::fromStdString(s); }
} // namespace

PlanComparison comparePlans(const Scenario& s, const Plan& plan, const SimResult& result, const Plan& ref,
                            const SimResult& refResult, const QString& thisName, const QString& refName)
{
    return comparePools(poolOutcome(s, plan, result), poolOutcome(s, ref, refResult), thisName.toStdString(),
                        refName.toStdString());
}

QStringList comparisonParagraphs(const PlanComparison& c)
{
    QStringList out;
    for (const ExplainLine& l : c.lines) {
        const QString text = str(l.text).toHtmlEscaped();
        out << (l.lead.empty() ? text : QStringLiteral("<b>%1</b>: %2").arg(str(l.lead).toHtmlEscaped(), text));
    }
    return out;
}

} // namespace shardlab::ui
