# A shardlab-cli run that must be refused with a useful message:
#   cmake -DCLI=<exe> -DARGS=<a|b|c> -DERROR_REGEX=<regex> [-DEXIT_CODE=<n>] [-DJSON=ON] [-DOUTPUT_REGEX=<re>]
#         [-DJSON_EQUALS=k=v|...] -P expect_failure.cmake
# Passes only if the exit code is non-zero (EXIT_CODE exactly, if given; a crash or a
# timeout never passes) and stderr matches ERROR_REGEX (write it to name the file and the
# JSON path). stdout must stay empty unless JSON is ON (validate --json reports there) or
# OUTPUT_REGEX is given (a report that ends in a refusal, e.g. the recipe's invalid plan).
include(${CMAKE_CURRENT_LIST_DIR}/cli_run.cmake)

if(NOT rc MATCHES "^[0-9]+$")
  cli_fail("the command did not exit normally")
endif()
if(rc EQUAL 0)
  cli_fail("the command succeeded but must fail")
endif()
if(DEFINED EXIT_CODE AND NOT rc EQUAL EXIT_CODE)
  cli_fail("exit code ${rc}, expected ${EXIT_CODE}")
endif()
if(JSON)
  cli_check_json()
elseif(DEFINED OUTPUT_REGEX)
  if(NOT out MATCHES "${OUTPUT_REGEX}")
    cli_fail("stdout does not match: ${OUTPUT_REGEX}")
  endif()
elseif(NOT out STREQUAL "")
  cli_fail("a failing command must print nothing on stdout")
endif()
if(DEFINED ERROR_REGEX AND NOT err MATCHES "${ERROR_REGEX}")
  cli_fail("stderr does not match: ${ERROR_REGEX}")
endif()
if(err MATCHES "internal error|json\\.exception")
  cli_fail("stderr shows an internal error")
endif()
