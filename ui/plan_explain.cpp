#include "plan_explain.h"

#include <QObject>

#include "model/engine_caps.h"
#include "search/search_space.h"

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

QStringList engineParagraphs(const Scenario& s, const Plan& plan, const EngineGap* gap)
{
    QStringList out;
    const std::optional<Engine> e = engineOfCollectives(s.workload.engine);
    if (!e)
        return out;
    const QString name = QStringLiteral("%1 %2").arg(QLatin1String(engineInfo(*e).label), QLatin1String(engineInfo(*e).version));
    const FieldErrors broken = engineViolations(*e, plan, s);
    if (broken.empty()) {
        out << QObject::tr("<b>%1</b>: runs this plan as planned (docs/engines.md).").arg(name.toHtmlEscaped());
    } else {
        QStringList rules;
        for (const FieldError& f : broken)
            rules << QStringLiteral("<b>%1</b>: %2").arg(str(f.where).toHtmlEscaped(), str(f.reason).toHtmlEscaped());
        out << QObject::tr("<b>%1</b> does not run this plan as planned, so export refuses it and offers the nearest "
                           "plan it runs:<br>%2")
                   .arg(name.toHtmlEscaped(), rules.join(QStringLiteral("<br>")));
    }
    if (!gap || !gap->applies)
        return out;
    const QString head = str(engineGapSentence(*gap)).toHtmlEscaped();
    QStringList causes;
    for (const FieldError& f : gap->rulesBroken)
        causes << QStringLiteral("<b>%1</b>: %2").arg(str(f.where).toHtmlEscaped(), str(f.reason).toHtmlEscaped());
    for (const ExplainLine& l : gap->causes)
        causes << (l.lead.empty() ? str(l.text).toHtmlEscaped()
                                  : QStringLiteral("<b>%1</b>: %2").arg(str(l.lead).toHtmlEscaped(),
                                                                        str(l.text).toHtmlEscaped()));
    out << QObject::tr("<b>Both answers</b> (exact, for the last search's scenario): %1.").arg(head)
            + (causes.isEmpty() ? QString()
                                : QObject::tr("<br>The difference comes from:<br>%1").arg(causes.join(QStringLiteral("<br>"))));
    return out;
}

QStringList spaceParagraphs(const Scenario& s, const Plan& plan)
{
    if (s.constraints.empty() && !runnableEngine(s))
        return {};
    const FieldErrors outside = SearchSpace(s).outsideConstraints(plan);
    if (outside.empty())
        return {QObject::tr("<b>Search space</b>: in the space the searches consider%1.")
                    .arg(str(runnableSpaceWords(s)).toHtmlEscaped())};
    QStringList rules;
    for (const FieldError& f : outside)
        rules << QStringLiteral("<b>%1</b>: %2").arg(str(f.where).toHtmlEscaped(), str(f.reason).toHtmlEscaped());
    return {QObject::tr("<b>Search space</b>: outside the scenario's, so no search proposes this plan:<br>%1")
                .arg(rules.join(QStringLiteral("<br>")))};
}

} // namespace shardlab::ui
