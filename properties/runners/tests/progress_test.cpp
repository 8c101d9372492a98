// The progress line's text: cells done, the rate, the elapsed time and the estimate of the time left.
#include <gtest/gtest.h>

#include "properties/runners/progress.h"

namespace kv = kvconform;

TEST(ProgressLine, ShowsCellsRateElapsedAndTimeLeft) {
  EXPECT_EQ(kv::progress_line::text(0, 14, 0, 0),
            "kvconform: 0/14 properties, 0 cases/s, 0:00 elapsed, time left unknown");
  EXPECT_EQ(kv::progress_line::text(3, 12, 1500, 30),
            "kvconform: 3/12 properties, 50 cases/s, 0:30 elapsed, about 1:30 left");
  EXPECT_EQ(kv::progress_line::text(1, 2, 10, 3725),
            "kvconform: 1/2 properties, 0 cases/s, 1:02:05 elapsed, about "
            "1:02:05 left");
  EXPECT_EQ(kv::progress_line::text(2, 2, 10, 1), "kvconform: 2/2 properties, 10 cases/s, 0:01 elapsed, done");
}
