// shardlab-cli: the headless front end over the same core the GUI uses.
#include <iostream>

#include "cli_commands.h"
#include "cli_signals.h"
#include "model/error.h"
#include "runner/run_search.h"

using namespace shardlab::cli;

namespace {
void printOverview(std::ostream& out)
{
    out << "usage: shardlab-cli <command> [options]\n\n"
           "ShardLab finds how to shard LLM inference across a GPU cluster.\n\ncommands:\n";
    for (const Command& c : commands()) {
        std::string name = "  " + c.spec.name;
        name.resize(16, ' ');
        out << name << c.spec.summary << "\n";
    }
    // From the registry, so algorithms added later (and ppo, whose plugin is not loaded
    // to print this) are listed without editing the help.
    out << "\nsearch algorithms (search --algo NAME):\n";
    for (const shardlab::SearchAlgorithmInfo& a : shardlab::searchAlgorithms()) {
        std::string name = "  " + a.name;
        name.resize(16, ' ');
        out << name << a.summary << "\n";
    }
    out << "\nRun 'shardlab-cli <command> --help' for a command's options.\n";
}
} // namespace

int main(int argc, char** argv)
{
    try {
        if (argc < 2) {
            printOverview(std::cerr);
            return kExitUsage;
        }
        const std::string name = argv[1];
        if (name == "--help" || name == "-h" || name == "help") {
            // "help COMMAND" is that command's --help.
            if (argc > 2) {
                for (const Command& c : commands())
                    if (c.spec.name == argv[2]) {
                        std::cout << helpText(c.spec);
                        return kExitOk;
                    }
                std::cerr << "shardlab-cli: unknown command '" << shardlab::displayText(argv[2])
                          << "' (run 'shardlab-cli --help')\n";
                return kExitUsage;
            }
            printOverview(std::cout);
            return kExitOk;
        }
        for (const Command& c : commands()) {
            if (c.spec.name != name)
                continue;
            std::vector<std::string> rest(argv + 2, argv + argc);
            for (const std::string& a : rest)
                if (a == "--help" || a == "-h") {
                    std::cout << helpText(c.spec);
                    return kExitOk;
                }
            Args args;
            std::string error;
            if (!parseArgs(c.spec, rest, args, error)) {
                // The error quotes the command line's text: shown as every message shows a
                // user's string (no terminal control, no text reversed).
                std::cerr << "shardlab-cli " << name << ": " << shardlab::displayText(error) << "\n";
                return kExitUsage;
            }
            if (!c.stopsCleanly) // the others install their own handler when they start
                installCutOffSignals();
            const int rc = c.run(args, std::cout, std::cerr);
            // A result that did not reach stdout (a full disk behind a redirection) is a
            // failure, not a success with an empty or cut file.
            if (!std::cout.flush()) {
                std::cerr << "shardlab-cli " << name << ": writing the output failed (stdout)\n";
                return rc == kExitOk ? 1 : rc;
            }
            return rc;
        }
        std::cerr << "shardlab-cli: unknown command '" << name << "' (run 'shardlab-cli --help')\n";
        return kExitUsage;
    } catch (const std::exception& e) {
        // Last line of defence: a bug, not user input; still no crash and no half output.
        std::cerr << "shardlab-cli: internal error: " << shardlab::displayText(e.what()) << "\n";
        return 3;
    }
}
