// The agentls plugin for IntelliJ-based IDEs. Needs the network (Gradle Plugin Portal, Maven
// Central, the IntelliJ Platform repositories); see ../BUILDING.md. The plain-Java core
// (../core) is compiled in as sources and is built and tested on its own by scripts/test-jetbrains.
plugins {
    id("java")
    id("org.jetbrains.intellij.platform") version "2.10.4"
}

group = "dev.agentls"
version = providers.gradleProperty("pluginVersion").get()

repositories {
    mavenCentral()
    intellijPlatform {
        defaultRepositories()
    }
}

dependencies {
    // Bundled into the plugin's lib/ (the same Gson 2.10 the core is tested with).
    implementation("com.google.code.gson:gson:2.10.1")
    intellijPlatform {
        intellijIdeaCommunity(providers.gradleProperty("platformVersion"))
        pluginVerifier()
        zipSigner()
    }
}

java {
    // 2024.2+ platforms are compiled for Java 21.
    toolchain {
        languageVersion = JavaLanguageVersion.of(21)
    }
}

sourceSets {
    main {
        java.srcDir("../core/src/main/java")
    }
}

val webviewDist = layout.projectDirectory.dir("../../webview/dist")

tasks {
    withType<JavaCompile> {
        options.encoding = "UTF-8"
        options.compilerArgs.addAll(listOf("-Xlint:all", "-Xlint:-serial"))
    }

    // The shared chat panel, built by `npm run build -w webview` in editors/.
    processResources {
        from(webviewDist) {
            include("panel.js", "panel.css", "index.html")
            into("webview")
        }
        doFirst {
            listOf("panel.js", "panel.css", "index.html").forEach {
                check(webviewDist.file(it).asFile.isFile) {
                    "editors/webview/dist/$it is missing: run `npm ci && npm run build -w webview` in editors/ first"
                }
            }
        }
    }
}

intellijPlatform {
    instrumentCode = false
    pluginConfiguration {
        version = providers.gradleProperty("pluginVersion")
        ideaVersion {
            sinceBuild = providers.gradleProperty("pluginSinceBuild")
            untilBuild = provider { null }
        }
    }
    pluginVerification {
        ides {
            recommended()
        }
    }
    signing {
        certificateChain = providers.environmentVariable("CERTIFICATE_CHAIN")
        privateKey = providers.environmentVariable("PRIVATE_KEY")
        password = providers.environmentVariable("PRIVATE_KEY_PASSWORD")
    }
    publishing {
        token = providers.environmentVariable("PUBLISH_TOKEN")
    }
}
