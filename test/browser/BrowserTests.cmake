# Headless-browser tests of the HTML views (issue #12 item 5).
#
#   aiprof_browser_test(NAME <test> HTML <page to write> CHECKS <checks.js>
#                       [COMMAND <command that writes the page> ...]
#                       [EXPECT_FAILURE <regex>]  # the harness's own self-test
#                       [NO_CSP])                 # a self-test page without the CSP
#
# runs COMMAND, then loads HTML in Debian's chromium through playwright-core
# (test/browser/check_page.js): no console error, no page error, no dialog,
# no network request, the shared Content-Security-Policy (csp_check.js:
# present, strict, every inline script allowed by its hash, an injected inline
# handler and script blocked), plus the view's own checks (CHECKS exports
# `async (t) => {...}`, see check_page.js). A screenshot of the page as loaded
# goes to <build>/browser/screenshots/<test>.png. The tests are labelled
# `heavy` (the sanitizer pass skips them) and need the browser_npm_install
# fixture, which installs playwright-core from package-lock.json into
# <build>/browser/node_modules.
find_program(AIPROF_NODE NAMES node nodejs)
find_program(AIPROF_NPM npm)
find_program(AIPROF_CHROMIUM NAMES chromium chromium-browser)
foreach(tool AIPROF_NODE AIPROF_NPM AIPROF_CHROMIUM)
  if(NOT ${tool})
    message(WARNING "${tool} not found: the browser tests will fail (scripts/install-deps.sh installs them)")
    set(${tool} ${tool}-NOTFOUND-install-it)
  endif()
endforeach()
set(AIPROF_BROWSER_DIR ${CMAKE_BINARY_DIR}/browser)

add_test(NAME browser_npm_install
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_CURRENT_LIST_DIR} -DDEST=${AIPROF_BROWSER_DIR} -DNPM=${AIPROF_NPM}
          -P ${CMAKE_CURRENT_LIST_DIR}/install_modules.cmake)
set_tests_properties(browser_npm_install PROPERTIES FIXTURES_SETUP browser_modules LABELS heavy TIMEOUT 600)

function(aiprof_browser_test)
  cmake_parse_arguments(ARG "NO_CSP" "NAME;HTML;CHECKS;EXPECT_FAILURE" "COMMAND" ${ARGN})
  set(expect "")
  if(ARG_EXPECT_FAILURE)
    set(expect --expect-failure ${ARG_EXPECT_FAILURE})
  endif()
  if(ARG_NO_CSP)
    list(APPEND expect --no-csp)
  endif()
  add_test(NAME ${ARG_NAME}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/run_browser_test.py
            --node ${AIPROF_NODE} --modules ${AIPROF_BROWSER_DIR}/node_modules --chromium ${AIPROF_CHROMIUM}
            --checks ${ARG_CHECKS} --html ${ARG_HTML}
            --screenshot ${AIPROF_BROWSER_DIR}/screenshots/${ARG_NAME}.png ${expect}
            -- ${ARG_COMMAND})
  set_tests_properties(${ARG_NAME} PROPERTIES FIXTURES_REQUIRED browser_modules LABELS heavy TIMEOUT 300)
endfunction()
