# Installs a test folder's npm packages (test/browser: playwright-core;
# test/mcp: @modelcontextprotocol/sdk; pinned by package-lock.json) into DEST
# with `npm ci`, unless DEST already holds the same lockfile's install. Run by
# the browser_npm_install and mcp_npm_install tests (fixtures).
#   cmake -DSRC=<test/browser> -DDEST=<build/browser> -DNPM=<npm> [-DPACKAGE=<main package>] -P install_modules.cmake
if(NOT PACKAGE)
  set(PACKAGE playwright-core)
endif()
file(MAKE_DIRECTORY ${DEST})
set(stamp ${DEST}/node_modules/.aiprof-lock)
file(READ ${SRC}/package-lock.json lock)
if(EXISTS ${stamp})
  file(READ ${stamp} installed)
  if(installed STREQUAL lock AND EXISTS ${DEST}/node_modules/${PACKAGE}/package.json)
    message(STATUS "${PACKAGE} already installed in ${DEST}")
    return()
  endif()
endif()
configure_file(${SRC}/package.json ${DEST}/package.json COPYONLY)
configure_file(${SRC}/package-lock.json ${DEST}/package-lock.json COPYONLY)
execute_process(COMMAND ${NPM} ci --no-audit --no-fund --loglevel=error
  WORKING_DIRECTORY ${DEST} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "npm ci in ${DEST} failed (${rc}): the npm registry must be reachable")
endif()
file(WRITE ${stamp} "${lock}")
