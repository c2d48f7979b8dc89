#include "help_menu.h"

#include <QApplication>
#include <QMainWindow>
#include <QMenuBar>
#include <QMessageBox>
#include <QObject>

#ifndef SHARDLAB_VERSION
#define SHARDLAB_VERSION "unknown"
#endif

namespace shardlab::ui {

QString howToReadText()
{
    return QObject::tr(
        "<p><b>Left, Scenario</b>: the model, the cluster and the workload with its limits (TTFT, TPOT). "
        "A red field says what is wrong; the banner at the top says whether Start can run.</p>"
        "<p><b>Search</b> (Ctrl+R starts, Esc stops): the curve is the best throughput per GPU found after "
        "each simulator call, one colour per run. The runs table lists the runs (tick to show, double-click "
        "the name to rename); the elite table lists the best distinct plans of the selected run; the heatmap "
        "shows how often those plans use each operator's sharding option (a frame marks the best plan's).</p>"
        "<p><b>Plan</b>: the shown plan per operator, where its time and memory go, and a what-if editor. "
        "<b>Topology</b>: the plan drawn on the GPUs and links. <b>Compare</b>: any two plans per generated "
        "token. <b>Pareto</b>: throughput per GPU against speed per user, every point proved optimal.</p>"
        "<p>Every figure is the simulator's estimate; the line above the tabs says what the last action did "
        "(hover it for all of it).</p>");
}

QString aboutText()
{
    return QObject::tr("<p><b>ShardLab %1</b></p><p>Searches how to shard LLM inference over a GPU cluster: "
                       "tensor, expert, pipeline and data parallel degrees and a sharding per operator, priced by "
                       "a simulator. The window and shardlab-cli run the same core.</p>")
        .arg(QStringLiteral(SHARDLAB_VERSION));
}

void addHelpMenu(QMainWindow* window)
{
    auto* help = window->menuBar()->addMenu(QObject::tr("&Help"));
    help->addAction(QObject::tr("&How to read this window"), window, [window] {
        QMessageBox::information(window, QObject::tr("How to read this window"), howToReadText());
    });
    help->addAction(QObject::tr("&About ShardLab"), window, [window] {
        QMessageBox::about(window, QObject::tr("About ShardLab"), aboutText());
    });
}

} // namespace shardlab::ui
