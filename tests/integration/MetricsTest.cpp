// Integration tests through the real msld (see DaemonFixture.h): its /metrics
// endpoint (prometheus-cpp's Exposer) as Prometheus sees it.
#include "DaemonFixture.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/wait.h>

namespace msl::test {
namespace {

class MetricsTest : public DaemonTest {};


bool hasLine(const std::string &text, const std::string &prefix) {
  return text.rfind(prefix, 0) == 0 || text.find("\n" + prefix) != std::string::npos;
}

TEST_F(MetricsTest, ScrapePassesPromtoolAndCountsACompile) {
  std::string promtool;
  if (runShell("command -v promtool", promtool) != 0)
    GTEST_SKIP() << "promtool not found (Debian package 'prometheus'; scripts/setup.sh installs it)";

  Daemon &d = startDaemon();
  msl::v1::CompileResponse response;
  ASSERT_TRUE(compile(d, compileRequest(readSourceFile("examples/saxpy.metal")), response).ok());
  ASSERT_TRUE(response.success()) << diagnosticsText(response);

  std::string scrape = d.scrapeMetrics();
  ASSERT_FALSE(scrape.empty()) << "GET /metrics failed";
  std::string file = (dir_ / "metrics.txt").string();
  std::ofstream(file, std::ios::binary) << scrape;

  std::string output;
  int rc = runShell("promtool check metrics < '" + file + "'", output);
  EXPECT_EQ(rc, 0) << "promtool check metrics:\n" << output << "\nscrape:\n" << scrape;
  EXPECT_EQ(output, "") << "promtool check metrics reported problems:\n" << output;

  // Every family, the new ones included, is there from start-up.
  for (const char *family :
       {"msld_requests_total", "msld_compile_duration_seconds", "msld_action_cache_hits_total",
        "msld_action_cache_misses_total", "msld_cas_bytes", "msld_cas_blobs",
        "msld_cas_corrupt_blobs_total", "msld_worker_crashes_total", "msld_worker_timeouts_total",
        "msld_worker_memory_limit_kills_total", "msld_worker_identity_mismatches_total",
        "msld_compiles_in_flight", "msld_compile_queue_depth", "msld_compiles_deduplicated_total",
        "msld_compiles_cancelled_total", "msld_requests_rejected_total"})
    EXPECT_TRUE(hasLine(scrape, std::string("# TYPE ") + family + " ")) << family << " missing:\n"
                                                                         << scrape;
  for (const char *reason : {"queue_full", "too_large", "invalid_argument"})
    EXPECT_TRUE(hasLine(scrape, std::string("msld_requests_rejected_total{reason=\"") + reason +
                                    "\"} 0"))
        << reason;
  EXPECT_TRUE(hasLine(scrape, "msld_compile_queue_depth 0"));
  EXPECT_TRUE(hasLine(scrape, "msld_compiles_cancelled_total 0"));

  // prometheus-cpp renders labels sorted by name.
  EXPECT_EQ(d.metric("msld_requests_total{code=\"OK\",method=\"Compile\"}"), 1);
  EXPECT_EQ(d.metric("msld_action_cache_misses_total"), 1);
  EXPECT_EQ(d.metric("msld_compile_duration_seconds_count{cache=\"miss\"}"), 1);
  EXPECT_EQ(d.metric("msld_compile_duration_seconds_bucket{cache=\"miss\",le=\"+Inf\"}"), 1);
  EXPECT_EQ(d.metric("msld_compiles_in_flight"), 0);
  EXPECT_GT(d.metric("msld_cas_blobs"), 0); // read from the store at scrape time
  EXPECT_GT(d.metric("msld_cas_bytes"), 0);
}

// --metrics-listen with port 0 picks a free port, which msld reports (the
// fixture scrapes the port from --ready-file), and the path is /metrics.
TEST_F(MetricsTest, PortZeroIsReportedAndServed) {
  Daemon &d = startDaemon();
  std::string scrape = d.scrapeMetrics();
  EXPECT_TRUE(hasLine(scrape, "# TYPE msld_requests_total counter")) << scrape;
}

} // namespace
} // namespace msl::test
