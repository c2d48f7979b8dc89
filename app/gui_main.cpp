// shardlab: the GUI front end.
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include "main_window.h"

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("ShardLab"));
    QApplication::setOrganizationName(QStringLiteral("ShardLab"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Find how to shard LLM inference across a GPU cluster."));
    parser.addHelpOption();
    QCommandLineOption scenarioOpt(QStringLiteral("scenario"), QStringLiteral("Scenario file to open."),
                                   QStringLiteral("S.json"));
    QCommandLineOption shotOpt(QStringLiteral("screenshot"), QStringLiteral("Save a PNG of the window."),
                               QStringLiteral("out.png"));
    QCommandLineOption quitOpt(QStringLiteral("quit-when-done"), QStringLiteral("Exit after scripted steps."));
    parser.addOption(scenarioOpt);
    parser.addOption(shotOpt);
    parser.addOption(quitOpt);
    parser.process(app);

    shardlab::ui::MainWindow window;
    if (parser.isSet(scenarioOpt) && !window.openScenarioFile(parser.value(scenarioOpt)))
        qWarning("%s", qPrintable(window.statusText()));
    window.show();

    if (parser.isSet(shotOpt) || parser.isSet(quitOpt)) {
        QTimer::singleShot(500, &window, [&] {
            int code = 0;
            if (parser.isSet(shotOpt) && !window.grab().save(parser.value(shotOpt))) {
                qWarning("cannot write %s", qPrintable(parser.value(shotOpt)));
                code = 1;
            }
            if (parser.isSet(quitOpt))
                QApplication::exit(code);
        });
    }
    return app.exec();
}
