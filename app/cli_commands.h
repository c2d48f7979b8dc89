// shardlab-cli commands. Each returns the process exit code: 0 success, 1 bad input or
// an invalid result, 2 usage error, 130 interrupted by SIGINT/SIGTERM (cli_signals.h).
// Human output by default, --json for machines.
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "cli_args.h"
#include "io/scenario_json.h"
#include "report/text_format.h" // padRight, shared with core's text output
#include "sim/simulator.h"

namespace shardlab::cli {

constexpr int kExitOk = 0;
constexpr int kExitInvalid = 1;
constexpr int kExitUsage = 2;

struct Command {
    CommandSpec spec;
    int (*run)(const Args& args, std::ostream& out, std::ostream& err);
    // Stops cleanly on SIGINT/SIGTERM (installStopSignals, cli_signals.h) and installs that
    // itself; every other command is given installCutOffSignals before it runs.
    bool stopsCleanly = false;
};

const std::vector<Command>& commands();

// Registered by each command group (cli_commands*.cpp).
void addScenarioCommands(std::vector<Command>& out);
void addSimCommands(std::vector<Command>& out);
void addExplainCommands(std::vector<Command>& out); // explain, compare
void addSearchCommands(std::vector<Command>& out);
// bench-search (cli_bench_search.cpp), registered by addSearchCommands.
int runBenchSearch(const Args& a, std::ostream& out, std::ostream& err);
void addExportCommands(std::vector<Command>& out);
void addChoicesCommands(std::vector<Command>& out); // pareto, size, sweep
void addLoadFrontCommand(std::vector<Command>& out); // load-front
// The search commands' helpers (cli_search_commands.cpp): the options plus the algorithm
// knobs (--set, --ppo-config); the knobs' values into `extra`; a plugin algorithm loaded
// before the run. False with an error naming the flag.
std::vector<OptionSpec> withKnobs(std::vector<OptionSpec> v, const std::vector<OptionSpec>& more = {});
bool knobValues(const Args& a, const std::vector<std::string>& algorithms, std::map<std::string, double>& extra,
                std::string& error);
bool pluginReady(const std::string& algorithm, std::string& error);
// validate (cli_validate.cpp), registered with the scenario commands.
int runValidate(const Args& a, std::ostream& out, std::ostream& err);
// calibrate --measurements (cli_measurements.cpp), called by calibrate.
int runCalibrateMeasurements(const Args& a, std::ostream& out, std::ostream& err);

// Shared helpers for command implementations.
extern const OptionSpec kJsonOption;     // --json
extern const OptionSpec kScenarioOption; // --scenario (file or preset name)
// --engine NAME and --runnable: the scenario's workload.engine and workload.runnable
// (loadScenarioArg applies them).
extern const OptionSpec kEngineScenarioOption;
extern const OptionSpec kRunnableOption;
extern const OptionSpec kProfileOption;  // --profile (kernel profile file or preset name)
// --budget N of search and bench-search: "simulator calls per run", SearchOptions' default,
// and the registry's algorithms that ignore a budget (SearchAlgorithmInfo::budgeted).
OptionSpec budgetOption();
std::string formatCount(double v); // 70.55 B, 1.20 T, 512 M
std::string formatNumber(const char* printfFormat, double v);
// The serving mode and one line per figure saying what it means (and which benchmark
// reports it), each line starting with `indent`.
void printServingFigures(std::ostream& out, const Scenario& s, const SimResult& r, const std::string& indent);
// An MoE plan's load imbalance and what two-batch overlap hides, one line after `indent`
// (nothing for a dense model or an uncosted plan).
void printMoeFigures(std::ostream& out, const Scenario& s, const Plan& p, const SimResult& r, const std::string& indent);
// "operators:" and name=option for every operator of the model, five per line after `indent`.
void printOperators(std::ostream& out, const ModelSpec& m, const Plan& p, const std::string& indent);
int reportErrors(std::ostream& err, const std::vector<std::string>& lines);
int reportFieldErrors(std::ostream& err, const FieldErrors& errors);
// --scenario value: a file path, or a shipped scenario preset name.
Parsed<Scenario> loadScenarioArg(const Args& a);
// Applies --profile (when given) to a cluster; false with the error in `errors`.
bool applyProfileArg(const Args& a, ClusterSpec& c, FieldErrors& errors);

extern const OptionSpec kPlanScenarioOption; // --scenario, optional beside a plan
extern const OptionSpec kIgnoreEmbeddedOption; // --ignore-embedded
// The scenario a plan is used with: the one embedded in the plan file, or --scenario, or
// both when they agree. When they differ the error lists the differences and how to
// proceed, unless --ignore-embedded (then --scenario wins). A plan from before plans
// embedded their scenario needs --scenario.
Parsed<Scenario> scenarioForPlan(const Args& a, const PlanDocument& plan, const std::string& planFile);

} // namespace shardlab::cli
