# Shared part of expect_success.cmake and expect_failure.cmake (cmake -P scripts run by
# ctest; they need no Qt). Input variables:
#   CLI    the shardlab-cli executable
#   ARGS   its arguments, separated by "|" (a ";" list does not survive add_test)
#   TIMEOUT  seconds the command may run (default 120)
# Runs the command and sets rc, out (stdout) and err (stderr). cli_fail() ends the test.
if(NOT DEFINED CLI)
  message(FATAL_ERROR "CLI is not set")
endif()
string(REPLACE "|" ";" _args "${ARGS}")
if(NOT DEFINED TIMEOUT)
  set(TIMEOUT 120)
endif()

execute_process(
  COMMAND "${CLI}" ${_args}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  TIMEOUT ${TIMEOUT})

function(cli_fail why)
  string(REPLACE ";" " " _shown "${_args}")
  message(FATAL_ERROR "${why}\n"
                      "command: ${CLI} ${_shown}\n"
                      "exit: ${rc}\n"
                      "--- stdout ---\n${out}\n"
                      "--- stderr ---\n${err}")
endfunction()

# JSON_NONEMPTY: "|"-separated members of stdout (dotted paths such as points.0.plan) that
# must be non-empty arrays or objects.
# JSON_EQUALS: "|"-separated key=value pairs; stdout's member key (a dotted path such as
# errors.0.path) must equal value (booleans read as ON/OFF).
# JSON_ABSENT: "|"-separated dotted paths that must not exist.
function(cli_check_json)
  if(NOT DEFINED JSON_NONEMPTY AND NOT DEFINED JSON_EQUALS AND NOT DEFINED JSON_ABSENT AND NOT JSON)
    return()
  endif()
  string(JSON _type ERROR_VARIABLE _jerr TYPE "${out}")
  if(_jerr OR NOT _type STREQUAL "OBJECT")
    cli_fail("stdout is not a JSON object (${_jerr})")
  endif()
  if(DEFINED JSON_NONEMPTY)
    string(REPLACE "|" ";" _members "${JSON_NONEMPTY}")
    foreach(_m IN LISTS _members)
      string(REPLACE "." ";" _mpath "${_m}") # points.0.plan -> points 0 plan
      string(JSON _n ERROR_VARIABLE _jerr LENGTH "${out}" ${_mpath})
      if(_jerr OR _n EQUAL 0)
        cli_fail("JSON member '${_m}' is missing or empty (${_jerr})")
      endif()
    endforeach()
  endif()
  if(DEFINED JSON_ABSENT)
    string(REPLACE "|" ";" _members "${JSON_ABSENT}")
    foreach(_m IN LISTS _members)
      string(REPLACE "." ";" _mpath "${_m}")
      string(JSON _got ERROR_VARIABLE _jerr GET "${out}" ${_mpath})
      if(NOT _jerr)
        cli_fail("JSON member '${_m}' must be absent, it is '${_got}'")
      endif()
    endforeach()
  endif()
  if(DEFINED JSON_EQUALS)
    string(REPLACE "|" ";" _pairs "${JSON_EQUALS}")
    foreach(_p IN LISTS _pairs)
      string(FIND "${_p}" "=" _eq)
      string(SUBSTRING "${_p}" 0 ${_eq} _key)
      math(EXPR _vstart "${_eq} + 1")
      string(SUBSTRING "${_p}" ${_vstart} -1 _want)
      string(REPLACE "." ";" _keypath "${_key}") # errors.0.path -> errors 0 path
      string(JSON _got ERROR_VARIABLE _jerr GET "${out}" ${_keypath})
      if(_jerr OR NOT _got STREQUAL _want)
        cli_fail("JSON member '${_key}' is '${_got}', expected '${_want}'")
      endif()
    endforeach()
  endif()
endfunction()
