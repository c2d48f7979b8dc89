#include "main_window.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "io/presets.h"
#include "scenario_view.h"

namespace shardlab::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setWindowTitle(tr("ShardLab"));
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Scenario:"), central));
    m_presetBox = new QComboBox(central);
    for (const PresetFile& f : scenarioPresetFiles())
        m_presetBox->addItem(QString::fromStdString(f.name));
    top->addWidget(m_presetBox, 1);
    auto* open = new QPushButton(tr("Open…"), central);
    top->addWidget(open);
    layout->addLayout(top);

    m_message = new QLabel(central);
    m_message->setWordWrap(true);
    m_message->setStyleSheet(QStringLiteral("color: #b00020;"));
    m_message->hide();
    layout->addWidget(m_message);

    m_view = new ScenarioView(central);
    layout->addWidget(m_view, 1);
    setCentralWidget(central);

    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open scenario…"), QKeySequence::Open, this, &MainWindow::openDialog);
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    connect(m_presetBox, &QComboBox::currentIndexChanged, this, &MainWindow::choosePreset);
    connect(open, &QPushButton::clicked, this, &MainWindow::openDialog);
    resize(1100, 720);
    if (m_presetBox->count() > 0)
        choosePreset(m_presetBox->currentIndex());
}

void MainWindow::choosePreset(int index)
{
    if (index < 0)
        return;
    auto s = scenarioPreset(m_presetBox->itemText(index).toStdString());
    if (!s.ok()) {
        showError(QString::fromStdString(s.firstError()));
        return;
    }
    setScenario(s.value);
}

void MainWindow::openDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), QString(),
                                                      tr("ShardLab scenario (*.json)"));
    if (!path.isEmpty())
        openScenarioFile(path);
}

bool MainWindow::openScenarioFile(const QString& path)
{
    auto s = loadScenarioFile(path.toStdString());
    if (!s.ok()) {
        QStringList lines;
        for (const FieldError& e : s.errors)
            lines << QString::fromStdString(e.toString());
        showError(lines.join(QLatin1Char('\n')));
        return false;
    }
    setScenario(s.value);
    return true;
}

void MainWindow::setScenario(const Scenario& s)
{
    m_scenario = s;
    m_message->hide();
    m_view->setScenario(s);
    setWindowTitle(tr("ShardLab — %1").arg(QString::fromStdString(s.name)));
    Q_EMIT scenarioChanged();
}

void MainWindow::showError(const QString& message)
{
    m_message->setText(message);
    m_message->show();
}

QString MainWindow::statusText() const
{
    return m_message->isVisible() ? m_message->text() : QString();
}

} // namespace shardlab::ui
