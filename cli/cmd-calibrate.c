/* cmd-calibrate.c - `phantom calibrate`: measure the target's LogGP parameters.
 *
 * Calibration is an MPI job: two ranks ping-pong between two nodes of the
 * target.  The phantom front end is not an MPI program, so under mpirun each
 * rank execs the measuring program (simmpi/phantom-calibrate.c) in its own
 * place: the process, and with it the rank's launcher environment, stays the
 * same.  Rank 0 writes the platform file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "phantom.h"

static const char usage[] =
    "usage: mpirun -np 2 --map-by node phantom calibrate [-o FILE] [--name NAME] [--reps N]\n"
    "                                                    [--cpu-share auto|S]\n"
    "   or: mpirun -np N phantom calibrate --check-cpu\n"
    "\n"
    "Measure o_s, o_r, L, G, o', the eager limit and the cost of a failed poll\n"
    "between two ranks with ping-pong micro-benchmarks, and write them as a\n"
    "platform file (doc/platform-format.md) for `phantom predict`.  Run it with\n"
    "two ranks on two nodes of the target (--map-by node); on one node it\n"
    "measures the node's shared memory.  Add cores_per_node,\n"
    "price_per_node_hour and currency to the file by hand.\n"
    "\n"
    "Each rank first spins on the clock for a second and notes when it was\n"
    "off the CPU: a CPU quota (a container's CPU limit), steal time or another\n"
    "busy process pauses a rank for milliseconds, which delays every exchange\n"
    "with it and which no LogGP parameter holds.  The file's cpu_share is the\n"
    "least share of the time a rank ran; below 95% the file and stderr say so,\n"
    "the runs are kept short enough to fit between its pauses, and o_s, o_r,\n"
    "o', o_poll and o_iprobe are their full-speed times over the share: on a\n"
    "CPU that runs half the time a call's own work takes twice as long, as the\n"
    "replayed computation does.\n"
    "--check-cpu does only that, on N ranks, and prints a line per rank.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE   write the platform file here, when complete (through\n"
    "                      FILE.part; default: standard output)\n"
    "  --name NAME         the platform's name (default: FILE without .conf)\n"
    "  --reps N            repetitions of each measurement, the fastest kept (1-64,\n"
    "                      default 15; throttled, 3N short runs and their median)\n"
    "  --cpu-share S       take the CPU's share of the time as S (0.01-1) instead of\n"
    "                      measuring it; 1 writes the fastest runs' overheads as they\n"
    "                      are (default: auto)\n"
    "  --check-cpu         only measure how much of the time each rank runs\n"
    "  -h, --help          show this help\n"
    "\n"
    "environment:\n"
    "  PHANTOM_CALIBRATE   path of the phantom-calibrate program to run\n";

/* The platform name from the output file: "runs/ib.conf" -> "ib". */
static void default_name(const char *out, char *name, size_t cap)
{
    const char *base = out ? strrchr(out, '/') : NULL;
    base = base ? base + 1 : out ? out : "calibrated";
    snprintf(name, cap, "%s", base);
    char *dot = strrchr(name, '.');
    if (dot && dot != name)
        *dot = 0;
}

/* --cpu-share: a plain decimal from 0.01 to 1. */
static int valid_share(const char *s)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    return errno == 0 && end != s && !*end && x >= 0.01 && x <= 1;
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, 0, 'o'},
                                             {"name", required_argument, 0, 'n'},
                                             {"reps", required_argument, 0, 'r'},
                                             {"check-cpu", no_argument, 0, 'c'},
                                             {"cpu-share", required_argument, 0, 's'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    const char *out = NULL, *name = NULL, *share = "auto";
    uint32_t reps = 15;
    int c, check_cpu = 0;
    while ((c = cli_getopt("calibrate", argc, argv, ":o:h", longopts)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'n': name = optarg; break;
        case 'r':
            if (cli_u32_option("calibrate", "--reps", optarg, 1, 64, &reps) != CLI_OK)
                return CLI_USAGE;
            break;
        case 's':
            if (strcmp(optarg, "auto") && !valid_share(optarg))
                return cli_usage_error("calibrate", "--cpu-share %s: expected auto or a share from 0.01 to 1",
                                       optarg);
            share = optarg;
            break;
        case 'c': check_cpu = 1; break;
        case 'h': return cli_help(&cmd_calibrate);
        default: return CLI_USAGE;
        }
    }
    if (optind < argc)
        return cli_usage_error("calibrate", "unexpected argument '%s'", argv[optind]);
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK"))
        return cli_error("calibrate", "not started by an MPI launcher: run it as "
                                      "mpirun -np 2 --map-by node phantom calibrate -o FILE");
    char *prog = cli_find_program("calibrate", "PHANTOM_CALIBRATE", "simmpi/phantom-calibrate",
                                  PKGLIBEXECDIR "/phantom-calibrate");
    if (!prog)
        return CLI_ERR;
    char namebuf[256], repsbuf[16];
    if (!name) {
        default_name(out, namebuf, sizeof namebuf);
        name = namebuf;
    }
    snprintf(repsbuf, sizeof repsbuf, "%u", reps);
    char *args[] = {prog, (char *)name, repsbuf, (char *)share, (char *)out, NULL};
    if (check_cpu) {
        if (out || name != namebuf || strcmp(share, "auto"))
            return cli_usage_error("calibrate", "--check-cpu writes no platform file (no -o, --name or --cpu-share)");
        args[1] = "--check-cpu";
        args[2] = NULL;
    }
    execv(prog, args);
    return cli_error("calibrate", "%s: cannot run: %s", prog, strerror(errno));
}

const ph_verb cmd_calibrate = {"calibrate", "measure a target's LogGP parameters (under mpirun)", usage, run};
