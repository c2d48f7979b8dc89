// shardlab-pretrain: trains the pretrained ppo policy shipped in
// resources/ppo/pretrained-policy.bin (docs/ppo.md, "Pretraining"). Seeded and deterministic
// (the header's wall time aside). A developer tool: it links LibTorch, the CLI does not.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "io/atomic_file.h"
#include "io/count_list.h"
#include "io/input_file.h"
#include "io/scenario_json.h"
#include "model/shell_word.h"
#include "rl/ppo_pretrain.h"

namespace {

const char* usageText()
{
    return "usage: shardlab-pretrain --out FILE [--seed 1] [--train 300] [--validation 40] [--epochs 30]\n"
                 "                         [--lr 0.003] [--exact-work 3000000] [--own-rounds 0] [--own-every 4]\n"
                 "                         [--pool-every 0] [--threads 1] [--select 0] [--select-seed 20261128]\n"
                 "                         [--select-budget 300[,N...]] [--select-search-seeds 2] [--select-margin 0.005]\n"
                 "       shardlab-pretrain --score WEIGHTS [--select 40] [--select-seed, --select-budget,\n"
                 "                         --select-search-seeds as above] [--score-scenarios DIR[,DIR...]]:\n"
                 "                         the selection score of a weights file, on the generated selection set\n"
                 "                         or on the scenario files (*.json) of the directories given\n"
                 "(docs/ppo.md gives the shipped weights' command and what each flag does)\n";
}

int usage(const std::string& why)
{
    std::cerr << "shardlab-pretrain: " << why << "\n" << usageText();
    return 2;
}

bool number(const std::string& flag, const char* text, double lo, double hi, double& out)
{
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (!end || *end || !(v >= lo && v <= hi)) {
        std::cerr << "shardlab-pretrain: " << flag << ": must be a number from " << lo << " to " << hi << " (got '"
                  << text << "')\n";
        return false;
    }
    out = v;
    return true;
}

// The scenario files of comma-separated directories (io's loadScenarioDirectory each);
// false with the reason on stderr (the directory, or the file and field that does not load).
bool loadScenarioDirs(const std::string& dirs, std::vector<shardlab::Scenario>& out)
{
    std::stringstream list(dirs);
    std::string dir;
    while (std::getline(list, dir, ',')) {
        if (dir.empty())
            continue;
        auto loaded = shardlab::loadScenarioDirectory(dir);
        if (!loaded.ok()) {
            for (const shardlab::FieldError& e : loaded.errors)
                std::cerr << "shardlab-pretrain: --score-scenarios: " << e.toString() << "\n";
            return false;
        }
        for (const shardlab::ScenarioFile& f : loaded.value)
            out.push_back(f.scenario);
    }
    return true;
}

// Prints the selection score of a weights file (--score), on the generated selection set
// or on the scenarios of --score-scenarios.
int scoreWeights(const std::string& file, const std::string& dirs, shardlab::rl::PretrainOptions o)
{
    const auto bytes = shardlab::readTextFile(file);
    if (!bytes.ok()) {
        std::cerr << "shardlab-pretrain: --score: " << bytes.error().toString() << "\n";
        return 1;
    }
    std::vector<shardlab::Scenario> scenarios;
    if (!dirs.empty() && !loadScenarioDirs(dirs, scenarios))
        return 1;
    if (o.selectionScenarios == 0)
        o.selectionScenarios = 40;
    try {
        const auto log = [](const std::string& line) { std::cerr << line << std::endl; };
        const auto sc = dirs.empty() ? shardlab::rl::scorePolicy(bytes.value(), o, log)
                                     : shardlab::rl::scorePolicyOn(bytes.value(), scenarios, o, log);
        const std::string what = dirs.empty() ? "selection scenarios (generator seed " + std::to_string(o.selectionSeed) + ")"
                                              : "scenarios of " + dirs;
        std::string budgets;
        for (int b : o.selectionBudgets)
            budgets += (budgets.empty() ? "" : ",") + std::to_string(b);
        std::printf("%s: %d %s, ppo at %s calls, %d seeds: best / optimum %.4f (mean), %.3f of scenarios at 0.99\n",
                    file.c_str(), sc.scenarios, what.c_str(), budgets.c_str(), o.selectionSearchSeeds, sc.meanRatio,
                    sc.atOptimum);
    } catch (const std::exception& e) {
        std::cerr << "shardlab-pretrain: --score: " << file << ": " << e.what() << "\n";
        return 1;
    }
    return 0;
}

// The command line: the training options, the output or weights to score, and the
// command as typed (recorded in the weights' header).
struct Args {
    shardlab::rl::PretrainOptions o;
    std::string out, score, scoreDirs;
    std::string command = "shardlab-pretrain";
};

// Sets the option a numeric flag names (the value already range-checked).
void setNumber(const std::string& a, double x, shardlab::rl::PretrainOptions& o)
{
    if (a == "--seed")
        o.seed = static_cast<unsigned long long>(x);
    else if (a == "--train")
        o.trainScenarios = static_cast<int>(x);
    else if (a == "--validation")
        o.validationScenarios = static_cast<int>(x);
    else if (a == "--epochs")
        o.epochs = static_cast<int>(x);
    else if (a == "--lr")
        o.learningRate = x;
    else if (a == "--exact-work")
        o.exactWorkLimit = static_cast<long long>(x);
    else if (a == "--own-rounds")
        o.ownRounds = static_cast<int>(x);
    else if (a == "--own-every")
        o.ownEvery = static_cast<int>(x);
    else if (a == "--pool-every")
        o.poolEvery = static_cast<int>(x);
    else if (a == "--select")
        o.selectionScenarios = static_cast<int>(x);
    else if (a == "--select-seed")
        o.selectionSeed = static_cast<unsigned long long>(x);
    else if (a == "--select-search-seeds")
        o.selectionSearchSeeds = static_cast<int>(x);
    else if (a == "--select-margin")
        o.selectionMargin = x;
    else
        o.threads = static_cast<int>(x);
}

// Reads the flags into `args`; 0, or the exit code after the message.
int parseArgs(int argc, char** argv, Args& args)
{
    struct Num {
        const char* flag;
        double lo, hi;
    };
    static const Num nums[] = {{"--seed", 0, 1e15},        {"--train", 1, 100000},    {"--validation", 0, 100000},
                               {"--epochs", 1, 10000},     {"--lr", 1e-6, 1},         {"--exact-work", 1000, 1e12},
                               {"--own-rounds", 0, 1000}, {"--own-every", 1, 1000}, {"--pool-every", 0, 1000},
                               {"--threads", 1, 64},       {"--select", 0, 100000},   {"--select-seed", 0, 1e15},
                               {"--select-search-seeds", 1, 100},
                               {"--select-margin", 0, 1}};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc)
            return usage(a + ": needs a value");
        const char* v = argv[++i];
        // Recorded in the weights' header and shown as a command to run again: each word
        // quoted as the shell must be given it (a path with blanks, quotes or ';').
        args.command += " " + shardlab::shellWord(a) + " " + shardlab::shellWord(v);
        if (a == "--out" && std::string(v) == "-")
            return usage("--out: - names no file here (the weights are always written to a file); write ./- for a "
                         "file named '-'");
        if (a == "--out" || a == "--score" || a == "--score-scenarios") {
            (a == "--out" ? args.out : a == "--score" ? args.score : args.scoreDirs) = v;
            continue;
        }
        if (a == "--select-budget") {
            std::vector<long long> budgets;
            std::string bad;
            if (shardlab::hasEmptyItem(v) || !shardlab::parseCountList(v, 10, 1000000, budgets, bad) || budgets.empty())
                return usage("--select-budget: '" + (bad.empty() ? std::string(v) : bad)
                             + "' is not a whole number of calls in [10, 1000000] (a list: 1000,4000)");
            args.o.selectionBudgets.assign(budgets.begin(), budgets.end());
            continue;
        }
        const Num* n = nullptr;
        for (const Num& c : nums)
            if (a == c.flag)
                n = &c;
        if (!n)
            return usage("unknown flag " + a);
        double x = 0;
        if (!number(a, v, n->lo, n->hi, x))
            return 2;
        setNumber(a, x, args.o);
    }
    return 0;
}

// Training replays bit for bit only on the same floating-point kernels, and LibTorch and
// OpenBLAS choose theirs by the CPU: an AVX-512 machine sums in another order than an
// AVX2 one and the weights differ from the first epoch (in the 8th digit, then more). So
// the trainer pins both to their AVX2 kernels, which every x86-64 machine it runs on has,
// by running itself again once with the choice in its environment: OpenBLAS reads it when
// the library loads, before main. A choice already in the environment is kept; without
// AVX2 (or where the re-run fails) it runs unpinned, and says so.
void pinKernels(char** argv)
{
    if (std::getenv("SHARDLAB_PRETRAIN_KERNELS"))
        return;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        setenv("ATEN_CPU_CAPABILITY", "avx2", 0);
        setenv("OPENBLAS_CORETYPE", "Haswell", 0);
        setenv("SHARDLAB_PRETRAIN_KERNELS", "avx2", 1);
        execv("/proc/self/exe", argv);
    }
#endif
    setenv("SHARDLAB_PRETRAIN_KERNELS", "unpinned", 1);
    std::cerr << "shardlab-pretrain: note: the CPU's own LibTorch and OpenBLAS kernels are used; weights "
                 "trained elsewhere may not replay bit for bit here\n";
}

} // namespace

int main(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
            std::cout << usageText();
            return 0;
        }
    pinKernels(argv);
    Args args;
    if (const int rc = parseArgs(argc, argv, args); rc != 0)
        return rc;
    shardlab::rl::PretrainOptions& o = args.o;
    if (!args.scoreDirs.empty() && args.score.empty())
        return usage("--score-scenarios: needs --score");
    if (!args.score.empty())
        return scoreWeights(args.score, args.scoreDirs, o);
    if (args.out.empty())
        return usage("--out: required");
    if (o.ownRounds * o.ownEvery > o.epochs)
        return usage("--own-rounds x --own-every: more epochs than --epochs");
    o.command = args.command;
    const auto r = shardlab::rl::pretrainPolicy(o, [](const std::string& line) { std::cerr << line << std::endl; });
    const auto st = shardlab::writeFileAtomically(args.out, r.weights);
    if (!st.ok()) {
        std::cerr << "shardlab-pretrain: " << args.out << ": " << st.error->toString() << "\n";
        return 1;
    }
    std::cerr << "wrote " << args.out << " (" << r.weights.size() << " bytes, " << r.info.trainingScenarios
              << " training scenarios, " << r.info.trainingSeconds << " s; skipped " << r.skippedInfeasible
              << " scenarios without a valid plan and " << r.skippedLimit << " over exact's work limit)\n";
    return 0;
}
