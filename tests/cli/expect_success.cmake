# A shardlab-cli run that must succeed:
#   cmake -DCLI=<exe> -DARGS=<a|b|c> [-DOUTPUT_REGEX=<regex>] [-DERROR_REGEX=<regex>] [-DJSON=ON]
#         [-DJSON_NONEMPTY=a|b] [-DJSON_EQUALS=k=v|...] -P expect_success.cmake
# Passes only if the exit code is 0, stderr is empty (or matches ERROR_REGEX), stdout matches OUTPUT_REGEX (if
# given) and, with JSON checks, stdout is a JSON object with those members.
include(${CMAKE_CURRENT_LIST_DIR}/cli_run.cmake)

if(NOT rc STREQUAL "0")
  cli_fail("the command failed")
endif()
if(DEFINED ERROR_REGEX)
  # Warnings a successful command must give (e.g. an approximated precision).
  if(NOT err MATCHES "${ERROR_REGEX}")
    cli_fail("stderr does not match: ${ERROR_REGEX}")
  endif()
elseif(NOT err STREQUAL "")
  cli_fail("a successful command must print nothing on stderr")
endif()
if(DEFINED OUTPUT_REGEX AND NOT out MATCHES "${OUTPUT_REGEX}")
  cli_fail("stdout does not match: ${OUTPUT_REGEX}")
endif()
cli_check_json()
