// TargetConditionals.h as a Metal shader sees it: Apple's SDK header that
// says which platform the code is built for, here derived from the -std=
// platform (ios-metal* or macos-metal*).
#pragma once
#define TARGET_OS_MAC 1
#if defined(__METAL_IOS__)
#define TARGET_OS_IPHONE 1
#define TARGET_OS_IOS 1
#define TARGET_OS_OSX 0
#else
#define TARGET_OS_IPHONE 0
#define TARGET_OS_IOS 0
#define TARGET_OS_OSX 1
#endif
#define TARGET_OS_SIMULATOR 0
#define TARGET_OS_TV 0
#define TARGET_OS_WATCH 0
#define TARGET_OS_MACCATALYST 0
